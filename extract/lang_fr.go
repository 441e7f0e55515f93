package extract

import "strings"

// french is the slot table of French (see slots.go).
var french = &langTable{
	code: "fr",
	relations: words(`belle-mère:mother-in-law beau-père:father-in-law belle-sœur:sister-in-law beau-frère:brother-in-law femme:wife épouse:wife mari:husband époux:husband conjoint:partner conjointe:partner compagnon:partner
		compagne:partner copine:girlfriend copain:boyfriend fiancée:fiancee fiancé:fiance fils:son fille:daughter
		mère:mother maman:mother père:father papa:father frère:brother sœur:sister soeur:sister grand-mère:grandmother
		grand-père:grandfather bébé:baby`),
	pets: words(`chiens:dogs chats:cats chien:dog chienne:dog chiot:dog chat:cat chatte:cat chaton:cat lapin:rabbit hamster:hamster
		perroquet:parrot cheval:horse tortue:tortoise`),
	diets: words(`végétarien:vegetarian végétarienne:vegetarian végétariens:vegetarian végétariennes:vegetarian
		végétalien:vegan végétalienne:vegan végane:vegan végan:vegan vegan:vegan vegane:vegan pescétarien:pescatarian
		pescétarienne:pescatarian`),
	jobs: words(`prof:teacher instit:teacher kiné:physiotherapist kinésithérapeute:physiotherapist professeur:teacher professeure:teacher prof:teacher enseignant:teacher enseignante:teacher
		instituteur:teacher institutrice:teacher médecin:doctor infirmier:nurse infirmière:nurse avocat:lawyer
		avocate:lawyer ingénieur:engineer ingénieure:engineer développeur:developer développeuse:developer
		programmeur:programmer programmeuse:programmer designer:designer architecte:architect comptable:accountant
		cuisinier:cook cuisinière:cook serveur:waiter serveuse:waitress journaliste:journalist écrivain:writer
		écrivaine:writer étudiant:student étudiante:student pharmacien:pharmacist pharmacienne:pharmacist
		dentiste:dentist vétérinaire:vet psychologue:psychologist policier:police-officer policière:police-officer
		pompier:firefighter traducteur:translator traductrice:translator photographe:photographer musicien:musician
		musicienne:musician électricien:electrician plombier:plumber mécanicien:mechanic fonctionnaire:civil-servant
		chercheur:researcher chercheuse:researcher boulanger:baker boulangère:baker`),
	allergens: words(`noix:nuts fruits-à-coque:nuts cacahuètes:peanuts arachides:peanuts cacahuète:peanuts
		fruits-de-mer:shellfish crustacés:shellfish poisson:fish œufs:eggs oeufs:eggs lait:milk produits-laitiers:dairy
		gluten:gluten blé:wheat soja:soy sésame:sesame pénicilline:penicillin latex:latex pollen:pollen chats:cats
		chiens:dogs abeilles:bees lactose:lactose fraises:strawberries`),
	languages: words(`français:French anglais:English espagnol:Spanish portugais:Portuguese allemand:German italien:Italian
		arabe:Arabic néerlandais:Dutch chinois:Chinese japonais:Japanese russe:Russian breton:Breton occitan:Occitan`),
	numbers:    numberWords("un:1 une:1 deux:2 trois:3 quatre:4 cinq:5 six:6 sept:7 huit:8 neuf:9 dix:10"),
	children:   words(`enfants:children fils:sons filles:daughters`),
	foods:      words(`de-la-viande:meat du-poisson:fish de-tout:everything`),
	statuses:   words(`marié:married mariée:married mariés:married mariées:married pacsé:in-a-civil-union pacsée:in-a-civil-union pacsés:in-a-civil-union`),
	workplaces: words(`une-pharmacie:a-pharmacy un-hôpital:a-hospital une-école:a-school une-banque:a-bank un-bureau:an-office`),
	conditions: words(`cœliaque:celiac-disease coeliaque:celiac-disease diabétique:diabetes diabète:diabetes asthme:asthma épilepsie:epilepsy`),
	relDates: words(`le-mois-dernier:last-month la-semaine-dernière:last-week l'année-dernière:last-year
		l'an-dernier:last-year hier:yesterday l'été-dernier:last-summer il-y-a-un-mois:a-month-ago
		il-y-a-un-an:a-year-ago il-y-a-deux-ans:two-years-ago cette-année:this-year`),
	common:  []string{"je", "et", "le", "la", "les", "des", "une", "un", "est", "pas", "mon", "ma", "mes", "nous", "avec", "pour", "dans", "du", "au", "suis", "j'ai", "ce", "qui", "que", "on", "bonjour", "j'habite"},
	leads:   []string{"il s'avère que", "j'ai découvert que", "j'ai appris que", "bref", "du coup", "en fait", "bonjour", "d'ailleurs", "aussi", "maintenant", "sinon", "au fait", "petite mise à jour", "moi", "j'ai décidé que", "finalement", "salut"},
	joins:   []string{"et"},
	clauses: []string{"mais", "car", "donc", "parce que", "et maintenant"},
	slips:   []string{`non,?\s+attends`, `je\s+veux\s+dire`, `pardon`, `plutôt`, `enfin\s+non`},
	self:    strings.Fields(`je j' moi mon ma mes nous notre nos`),
	passing: strings.Fields(`aujourd'hui ce-soir demain hier ce-matin cet-après-midi ce-week-end cette-semaine là-maintenant je-vais on-va nous-allons lundi mardi mercredi jeudi vendredi samedi dimanche`),
	ifs:     strings.Fields(`si imagine imaginons supposons hypothétiquement disons`),
	others:  strings.Fields(`ami amie amis amies collègue collègues patron patronne voisin voisine cousin cousine`),
	kin:     strings.Fields(`frère sœur mère père maman parents oncle tante neveu nièce beau-frère belle-sœur`),
	mine:    strings.Fields(`moi mon ma mes notre nos`),
	topics:  words(`habite:home habitons:home reste:home restons:home déménage:home appart:home appartement:home quartier:home travaille:job boulot:job emploi:job entreprise:job poste:job allergique:allergy allergie:allergy études:study étudie:study fac:study supporter:team équipe:team maintenant:now ne-plus:change changé:change quitté:change désormais:now réorientée:change réorienté:change déménagement:home loue:home embauché:job embauchée:job licencié:job licenciée:job retraite:job démissionné:job séparés:partner rompu:partner fiancés:partner mariés:partner déménagé:home+change emménagé:home+change`),
	patterns: []rawPattern{
		{"team", `(?:mon\s+(?:club|équipe)\s+(?:de\s+cœur\s+)?(?:c['’]est|est)|je\s+suis\s+(?:pour|à\s+fond\s+pour))\s+(?:le\s+|la\s+|l['’])?{ORG}{END}`},
		{"age", `à\s+{NUM}\s+ans,?\s+(?:je|j['’])`},
		{"named-age", `{NAME}\s+(?:a\s+maintenant|a\s+déjà|vient\s+d['’]avoir|a\s+eu)\s+{NUM}\s+ans{END}`},
		{"~moved-there", `(?:donc\s+|alors\s+|et\s+)?(?:on\s+a|nous\s+avons|j['’]ai)\s+déménagé(?:\s+{WHEN})?(?:\s+(?:in|on|em|en|im|au|le|no|na)\s+[\p{L}\d]+)?(?:\s*[.,!;]|\s*$)`},
		{"moved", `(?:on|nous)\s+(?:vient|venons)\s+d['’]acheter\s+(?:un|une)\s+(?:condo|maison|appart(?:ement)?|logement)\s+(?:à|a|en|au)\s+{PLACE}`},
		{"employer-neg", `j['’]ai\s+(?:lâché|laissé|démissionné\s+de)\s+(?:ma\s+job|mon\s+(?:emploi|poste|travail|job))\s+(?:chez|à)\s+{ORG}{END}`},
		{"self-employed", `je\s+suis\s+(?:rendu|rendue|devenu|devenue|maintenant)\s+(?P<x>travailleur\s+autonome|travailleuse\s+autonome|indépendante?|freelance|à\s+mon\s+compte)`},
		{"employer", `je\s+(?:suis|travaille)\s+(?:[\p{L}-]+\s+)?chez\s+{ORG}{END}`},
		{"employer-neg", `j['’]ai\s+quitté\s+{ORG}{END}`},
		{"employer", `je\s+commence\s+(?:[^,.;]{0,15}?\s+)?chez\s+{ORG}(?:\s+comme\s+|{END})`},
		{"breakup", `(?:mon|ma)\s+{REL}\s+et\s+moi,?\s+(?:on\s+s['’]est|nous\s+nous\s+sommes)\s+(?:séparés?|quittés?|séparées?)`},
		{"breakup", `{NAME}\s+et\s+moi,?\s+(?:on\s+s['’]est|nous\s+nous\s+sommes)\s+(?:séparés|séparées|quittés)`},
		{"dating", `je\s+suis\s+(?:maintenant\s+)?(?:avec)\s+{NAME}`},
		{"diet", `je\s+(?:suis\s+passée?|me\s+suis\s+mise?)\s+(?:au|à\s+la|aux)\s+{DIET}`},
		{"plays", `je\s+joue\s+(?:du|de\s+la|de\s+l['’])\s*(?P<x>{INSTR})`},
		{"instrument", `j['’]apprends\s+(?:à\s+jouer\s+)?(?:du|de\s+la|le|la)\s+(?P<x>{INSTR})`},
		{"name", `(?:je\s+m['’]appelle|mon\s+nom\s+est|moi\s+c['’]est)\s+{NAME}`},
		{"age", `j['’]ai\s+{NUM}\s+ans`},
		{"home", `(?:j['’]habite|je\s+vis|nous\s+habitons|nous\s+vivons|on\s+habite|on\s+vit)\s+(?:maintenant\s+|désormais\s+)?(?:à|a|en|au)\s+{PLACE}`},
		{"moved", `(?:j['’]ai|nous\s+avons|on\s+a)\s+déménagé\s+(?:à|a|en|au)\s+{PLACE}(?:,?\s+{WHEN})?`},
		{"moved", `(?:je\s+viens|on\s+vient|nous\s+venons)\s+(?:de\s+déménager|d['’]emménager|de\s+m['’]installer|de\s+nous\s+installer)\s+(?:à|a|en|au)\s+{PLACE}`},
		{"home", `(?:j['’]habite|je\s+vis|nous\s+habitons|on\s+habite)\s+(?:près\s+de|à\s+côté\s+de)\s+{PLACE}`},
		{"age", `(?:je\s+viens\s+d['’]avoir|j['’]ai\s+eu)\s+{NUM}\s+ans`},
		{"pregnant", `je\s+suis\s+enceinte`},
		{"moved", `je\s+me\s+suis\s+installée?\s+(?:à|a|en|au)\s+{PLACE}(?:,?\s+{WHEN})?`},
		{"home-neg", `(?:je\s+n['’]habite|je\s+ne\s+vis|nous\s+n['’]habitons)\s+plus\s+(?:à|a|en|au)\s+{PLACE}`},
		{"origin", `(?:je\s+viens|je\s+suis\s+originaire)\s+(?:de|du|d['’])\s*{PLACE}`},
		{"job", `je\s+suis\s+(?:maintenant\s+|désormais\s+)?(?P<x>{JOB})(?P<at>\s+(?:de|du|des|à|a|au|aux|en|chez|dans|pour)\s+[^,.;:!?]{1,80}?)?{END}`},
		{"job", `je\s+travaille\s+(?:maintenant\s+)?comme\s+(?:{JOB}|{X}){END}`},
		{"job-neg", `je\s+ne\s+suis\s+plus\s+{JOB}`},
		{"employer", `je\s+(?:travaille|bosse)\s+(?:maintenant\s+|désormais\s+|actuellement\s+)?(?:chez|pour)\s+{ORG}{END}`},
		{"employer", `je\s+suis\s+(?:maintenant\s+|désormais\s+)?chez\s+{ORG}{END}`},
		{"employer", `j['’]ai\s+(?:rejoint|intégré)\s+{ORG}{END}`},
		{"breakup", `avec\s+{NAME},?\s+c['’]est\s+fini`},
		{"breakup", `{NAME}\s+et\s+moi,?\s+(?:on\s+s['’]est|nous\s+nous\s+sommes)\s+(?:séparé|quitté)`},
		{"dating", `je\s+(?:sors|suis)\s+(?:maintenant\s+)?avec\s+{NAME}`},
		{"learning", `j['’]apprends\s+(?:maintenant\s+)?(?:l['’]|le\s+)?(?P<l>{LANG1})`},
		{"possess", `j['’]ai\s+(?:maintenant\s+)?(?:un|une)\s+(?P<y>[^,.;!?]{2,30}?)(?:\s+(?:de|qui|depuis)\b|{END})`},
		{"possess", `je\s+roule\s+(?:maintenant\s+)?en\s+(?P<y>[^,.;!?]{2,30}?){END}`},
		{"sold", `j['’]ai\s+vendu\s+(?:la|le|ma|mon|notre)\s+(?P<x>[^,.;!?]{2,30}?){END}`},
		{"name", `(?:je\s+m['’]appelle|c['’]est)\s+(?:maintenant\s+|désormais\s+)?{NAME}\s+(?:maintenant|désormais)`},
		{"allergy-fix", `ce\s+n['’]est\s+pas\s+(?:aux?\s+|à\s+la\s+|à\s+l['’])?{ALLERGEN}\s+que\s+je\s+suis\s+allergique,?\s+c['’]est\s+(?:aux?\s+|à\s+la\s+|à\s+l['’])?(?P<y>[\p{L} -]{2,30}?){END}`},
		{"quit-habit", `j['’]ai\s+arrêté\s+(?:le|la|les|l['’])\s*(?P<x>foot|football|tennis|rugby|yoga|running|vélo|piano|café|sport|judo|basket|hand|natation)\b`},
		{"took-up", `maintenant\s+je\s+(?:fais|joue)\s+(?:du|de\s+la|au|à\s+la)\s+(?P<y>padel|escalade|yoga|pilates|running|vélo|natation|tennis|foot|boxe|danse|judo|basket)\b`},
		{"habit", `je\s+joue\s+au\s+(?P<x>foot|tennis|rugby|basket|padel|golf)(?P<freq>\s+(?:(?:tous\s+)?les\s+[\p{L}]+|le\s+[\p{L}]+|[\p{L}]+\s+fois\s+par\s+semaine))?`},
		{"died", `{NAME}\s+est\s+(?:mort|morte|décédée?|parti|partie)\b`},
		{"pet", `(?:on\s+a|j['’]ai|nous\s+avons)\s+(?:adopté\s+)?(?:un|une)\s+{PET}[^.!?]{0,30}?,?\s+(?:il|elle)\s+s['’]appelle\s+{NAME}`},
		{"pet", `(?:j['’]ai|nous\s+avons|on\s+a)\s+(?:un|une)\s+{PET}(?:\s+[\p{L}]+)?,\s+{NAME}`},
		{"study", `je\s+fais\s+(?:maintenant\s+)?(?:du\s+|de\s+la\s+|des\s+)?(?P<x>droit|médecine|pharmacie|informatique|histoire|philo(?:sophie)?|psycho(?:logie)?|économie|éco|lettres|maths|mathématiques|biologie|chimie|physique|architecture|sociologie|kiné)(?:\s+à\s+[^,.;!?]{2,30}?)?{END}`},
		{"employer-neg", `(?:j['’]ai\s+quitté\s+(?:mon\s+(?:travail|poste)\s+(?:chez|à)\s+)?|je\s+ne\s+travaille\s+plus\s+(?:chez|pour)\s+){ORG}{END}`},
		{"diet", `(?:je\s+suis|nous\s+sommes)\s+(?:maintenant\s+|désormais\s+)?{DIET}{END}`},
		{"diet-neg", `je\s+ne\s+suis\s+plus\s+{DIET}`},
		{"diet", `je\s+suis\s+[^,.;!?]{1,40}?\s+et\s+{DIET}{END}`},
		{"eats-again", `(?:j['’]ai\s+recommencé\s+à\s+manger|je\s+remange|je\s+mange)\s+(?P<food>de\s+la\s+viande|du\s+poisson|de\s+tout)(?P<again>\s+à\s+nouveau)?`},
		{"allergy", `pas\s+de\s+{ALLERGEN}\s+pour\s+moi\b[^.!?]{0,30}?allergique`},
		{"allergy", `je\s+suis\s+(?:très\s+)?allergique\s+(?:à|a|au|aux)\s+(?:la\s+|l['’]|les\s+)?(?:{ALLERGEN}{END}|{X}{END})`},
		{"allergy", `j['’]ai\s+une\s+allergie\s+(?:à|a|au|aux)\s+(?:la\s+|l['’]|les\s+)?(?:{ALLERGEN}{END}|{X}{END})`},
		{"allergy-neg", `je\s+ne\s+suis\s+(?:pas|plus)\s+allergique\s+(?:à|a|au|aux)\s+(?:la\s+|l['’]|les\s+)?(?:{ALLERGEN}{END}|{X}{END})`},
		{"intolerance", `je\s+suis\s+intolérante?\s+(?:au|à\s+la|aux)\s+{ALLERGEN}`},
		{"condition", `(?:je\s+suis|j['’]ai)\s+(?:de\s+l['’])?{COND}`},
		{"member", `(?:mon|ma)\s+{REL}\s+s['’]appelle\s+{NAME}`},
		{"member", `(?:mon|ma|notre)\s+{REL}\s+{NAME}(?:,?\s+(?:qui\s+)?a\s+{NUM}\s+ans)?`},
		{"~member", `avec\s+(?:mon|ma|notre)\s+{REL},?\s+{NAME}`},
		{"member-cond", `(?:mon|ma|notre)\s+{REL}(?:\s+{NAME})?\s+(?:est|a)\s+{COND}`},
		{"member-intolerance", `(?:mon|ma|notre)\s+{REL}(?:\s+{NAME})?\s+est\s+intolérante?\s+(?:au|à\s+la|aux)\s+{ALLERGEN}`},
		{"pronoun-cond", `(?P<pron>il|elle)\s+(?:est|a)\s+(?:une?\s+)?{COND}`},
		{"pronoun-allergy", `(?P<pron>il|elle)\s+est\s+allergique\s+(?:aux?|à\s+la|à\s+l['’]|au)\s*{ALLERGEN}`},
		{"pronoun-age", `(?P<pron>il|elle)\s+a\s+{NUM}\s+ans`},
		{"member-allergy", `(?:mon|ma|notre)\s+{REL}(?:\s+{NAME})?\s+est\s+allergique\s+(?:à|a|au|aux)\s+(?:la\s+|l['’]|les\s+)?(?:{ALLERGEN}{END}|{X}{END})`},
		{"count", `(?:j['’]ai|nous\s+avons|on\s+a)\s+{NUM}\s+{KIDS}`},
		{"pets", `(?:j['’]ai|nous\s+avons|on\s+a)\s+{NUM}\s+{PETS}`},
		{"pet", `(?:j['’]ai|nous\s+avons|on\s+a)\s+(?:un|une)\s+{PET}\s+(?:qui\s+s['’]appelle|nommée?|appelée?)\s+{NAME}`},
		{"pet", `(?:mon|ma|notre)\s+{PET}\s+s['’]appelle\s+{NAME}`},
		{"languages", `je\s+parle\s+{LANGS}`},
		{"self-employed", `je\s+me\s+suis\s+(?:installée?|mise?)\s+(?P<x>à\s+mon\s+compte)(?:\s+{WHEN})`},
		{"retired", `j['’]ai\s+pris\s+ma\s+retraite(?:\s+{WHEN})`},
		{"moved", `(?:on\s+a|nous\s+avons|j['’]ai)\s+acheté\s+(?:une\s+maison|un\s+appart(?:ement)?)\s+(?:à|a|en)\s+{PLACE}(?:,?\s+{WHEN})?`},
		{"married", `(?:nous\s+nous\s+sommes|on\s+s['’]est|je\s+me\s+suis)\s+(?P<status>mariée?s?|pacsée?s?)(?:\s+{WHEN})?`},
		{"study", `(?:j['’]étudie|je\s+fais\s+des\s+études\s+de)\s+{X}{END}`},
		{"turning", `je\s+vais\s+avoir\s+{NUM}\s+ans`},
		{"team", `(?:je\s+supporte|je\s+suis\s+(?:un\s+|une\s+)?(?:grand\s+|grande\s+|fervent\s+|fervente\s+)?(?:fan|supporter|supportrice)\s+(?:de|du|des|de\s+l['’])|mon\s+équipe\s+préférée\s+est)\s+(?:le\s+|la\s+|l['’])?{ORG}{END}`},
	},
}
