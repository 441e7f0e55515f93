package extract

import "strings"

// german is the slot table of German (see slots.go). Nouns are written
// with a capital, so a name is read only where a name is said ("ich
// heiße", "mein Sohn Leo"), never after a bare "ich bin".
var german = &langTable{
	code: "de",
	relations: words(`schwiegermutter:mother-in-law schwiegervater:father-in-law schwägerin:sister-in-law schwager:brother-in-law frau:wife ehefrau:wife mann:husband ehemann:husband partner:partner partnerin:partner
		freundin:girlfriend freund:boyfriend verlobte:fiancee verlobter:fiance sohn:son tochter:daughter mutter:mother
		mama:mother vater:father papa:father bruder:brother schwester:sister oma:grandmother opa:grandfather
		großmutter:grandmother großvater:grandfather baby:baby`),
	pets: words(`dackel:dachshund hunde:dogs katzen:cats hund:dog hündin:dog kater:cat katze:cat kaninchen:rabbit hamster:hamster papagei:parrot pferd:horse
		schildkröte:tortoise wellensittich:budgie`),
	diets: words(`vegan:vegan veganer:vegan veganerin:vegan vegetarier:vegetarian vegetarierin:vegetarian
		vegetarisch:vegetarian pescetarier:pescatarian pescetarierin:pescatarian`),
	jobs: words(`lehrer:teacher lehrerin:teacher arzt:doctor ärztin:doctor krankenpfleger:nurse krankenschwester:nurse
		pflegerin:nurse anwalt:lawyer anwältin:lawyer ingenieur:engineer ingenieurin:engineer entwickler:developer
		entwicklerin:developer programmierer:programmer programmiererin:programmer designer:designer designerin:designer
		architekt:architect architektin:architect buchhalter:accountant buchhalterin:accountant koch:cook köchin:cook
		kellner:waiter kellnerin:waitress journalist:journalist journalistin:journalist schriftsteller:writer
		schriftstellerin:writer student:student studentin:student apotheker:pharmacist apothekerin:pharmacist
		zahnarzt:dentist zahnärztin:dentist tierarzt:vet tierärztin:vet psychologe:psychologist psychologin:psychologist
		polizist:police-officer polizistin:police-officer übersetzer:translator übersetzerin:translator
		fotograf:photographer fotografin:photographer musiker:musician musikerin:musician elektriker:electrician
		mechaniker:mechanic mechanikerin:mechanic beamter:civil-servant beamtin:civil-servant forscher:researcher
		forscherin:researcher bäcker:baker bäckerin:baker`),
	allergens: words(`nüsse:nuts nuss:nuts erdnüsse:peanuts erdnuss:peanuts meeresfrüchte:shellfish schalentiere:shellfish
		fisch:fish eier:eggs ei:eggs milch:milk gluten:gluten weizen:wheat soja:soy sesam:sesame penicillin:penicillin
		latex:latex pollen:pollen katzen:cats hunde:dogs bienen:bees laktose:lactose erdbeeren:strawberries`),
	languages: words(`deutsch:German englisch:English spanisch:Spanish französisch:French portugiesisch:Portuguese
		italienisch:Italian türkisch:Turkish polnisch:Polish russisch:Russian arabisch:Arabic niederländisch:Dutch
		chinesisch:Chinese japanisch:Japanese griechisch:Greek schwedisch:Swedish`),
	numbers:  numberWords("ein:1 eine:1 einen:1 zwei:2 drei:3 vier:4 fünf:5 sechs:6 sieben:7 acht:8 neun:9 zehn:10 elf:11 zwölf:12"),
	children: words(`kindern:children kinder:children söhne:sons töchter:daughters kind:children`),
	foods:    words(`fleisch:meat fisch:fish alles:everything`),
	statuses: words(`geheiratet:married`),
	workplaces: words(`apotheke:a-pharmacy krankenhaus:a-hospital klinik:a-clinic schule:a-school bank:a-bank büro:an-office
		praxis:a-practice restaurant:a-restaurant`),
	conditions: words(`laktoseintoleranz:lactose-intolerance zöliakie:celiac-disease diabetes:diabetes diabetiker:diabetes diabetikerin:diabetes asthma:asthma epilepsie:epilepsy`),
	relDates: words(`letzten-monat:last-month letzte-woche:last-week letztes-jahr:last-year gestern:yesterday
		letzten-sommer:last-summer vor-einem-monat:a-month-ago vor-einem-jahr:a-year-ago vor-zwei-jahren:two-years-ago
		vor-zwei-monaten:two-months-ago dieses-jahr:this-year`),
	common:  []string{"ich", "und", "der", "die", "das", "ist", "nicht", "mit", "ein", "eine", "mein", "meine", "wir", "sie", "auf", "für", "bin", "habe", "zu", "von", "dem", "den", "im", "hallo", "wohne", "arbeite"},
	leads:   []string{"tatsächlich", "endlich", "ehrlich gesagt", "neuigkeiten", "übrigens", "eigentlich", "also", "hallo", "jetzt", "auch", "ach ja", "kurzes update", "update", "ich habe beschlossen", "inzwischen"},
	joins:   []string{"und"},
	clauses: []string{"aber", "weil", "denn", "doch", "sondern", "und jetzt"},
	slips:   []string{`nein,?\s+(?:moment|warte)`, `moment`, `ich\s+meine`, `äh`, `sorry`, `quatsch`},
	self:    strings.Fields(`ich mein meine meinen meinem meiner meines mich mir wir unser unsere unseren unserem unserer uns hab habe bin wohne arbeite studiere`),
	passing: strings.Fields(`heute morgen gestern heute-abend heute-morgen dieses-wochenende diese-woche gerade montag dienstag mittwoch donnerstag freitag samstag sonntag ich-werde wir-werden`),
	ifs:     strings.Fields(`wenn falls angenommen stell-dir-vor hypothetisch angenommen`),
	others:  strings.Fields(`kollege kollegin kollegen chef chefin nachbar nachbarin cousin cousine`),
	kin:     strings.Fields(`bruder schwester geschwister mutter vater mama papa eltern onkel tante oma opa neffe nichte schwager schwägerin`),
	mine:    strings.Fields(`mein meine meinen meinem meiner meines mich mir unser unsere unseren unserem unserer uns`),
	topics:  words(`wohne:home wohnen:home gezogen:home wohnung:home arbeite:job arbeiten:job job:job firma:job stelle:job gekündigt:job beruf:job allergisch:allergy allergie:allergy studiere:study studium:study uni:study fan:team verein:team jetzt:now nicht-mehr:change gewechselt:change gekündigt:change stattdessen:change inzwischen:now ziehe:home umzug:home miete:home angefangen:job eingestellt:job entlassen:job rente:job selbstständig:job getrennt:partner verlobt:partner geheiratet:partner umgezogen:home+change`),
	patterns: []rawPattern{
		{"~count", `(?:unsere|meine)\s+{KIDS}[,:]?`},
		{"team", `(?:mein\s+(?:verein|lieblingsverein|klub)\s+ist|ich\s+bin\s+(?:anhänger(?:in)?\s+(?:von|des)|für)|ich\s+drücke)\s+(?:der\s+|dem\s+|den\s+)?{ORG}(?:\s+die\s+daumen)?{END}`},
		{"age", `mit\s+{NUM}(?:\s+jahren)?,?\s+(?:(?:bin|habe|hab|kann|muss|will|fange)\s+ich|ich\s+(?:bin|habe|hab|kann|muss|will|fange))\b`},
		{"~moved-there", `(?:wir\s+sind|ich\s+bin)\s+(?:{WHEN}\s+)?(?:umgezogen|hingezogen|dorthin\s+gezogen)(?:\s*[.,!;]|\s*$)`},
		{"diet", `(?:ich\s+bin|wir\s+sind|bin)\s+(?:jetzt\s+)?(?:auf|zu)\s+{DIET}\s+(?:umgestiegen|gewechselt)`},
		{"job", `(?:ich\s+)?fange\s+(?:[^,.;]{0,20}?\s+)?als\s+(?P<x>[\p{L}]+)(?P<at>\s+bei\s+[^,.;:!?]{1,40}?)\s+an\b`},
		{"plays", `(?:ich\s+)?spiel(?:e)?\s+(?:[^,.;]{0,25}?\s+)?(?P<x>{INSTR})\b`},
		{"instrument", `ich\s+lerne\s+(?:gerade\s+|jetzt\s+|seit\s+[^,.;]{1,20}?\s+)?(?P<x>{INSTR})`},
		{"name", `(?:ich\s+heiße|mein\s+name\s+ist|ich\s+bin\s+(?:der|die))\s+(?:jetzt\s+|inzwischen\s+)?{NAME}`},
		// A first and a last name: German writes every noun capitalised
		// ("ich bin Lehrerin"), but not two in a row after "ich bin".
		{"name", `ich\s+bin\s+(?P<name>(?-i:\p{Lu}\p{Ll}+)\s+(?-i:\p{Lu}\p{Ll}+))(?:\s*$|\s*[,.!]|\s+und\b)`},
		{"diet", `(?:ich\s+)?(?:lebe|esse)\s+(?:jetzt\s+|seit\s+[^,.;]{2,20}?\s+)?{DIET}`},
		{"diet", `(?:lebe|esse)\s+ich\s+(?:jetzt\s+)?{DIET}`},
		{"study", `(?:ich\s+)?studier(?:e)?\s+(?:jetzt\s+)?{X}(?:\s+in\s+{PLACE})?{END}`},
		{"age", `ich\s+bin\s+(?:jetzt\s+)?{NUM}(?:\s+jahre\s+alt)?{END}`},
		{"home", `(?:ich\s+|wir\s+)?(?:wohne|wohnen|wohn|lebe|leben)\s+(?:jetzt\s+|inzwischen\s+|übrigens\s+|auch\s+|schon\s+|eigentlich\s+|ja\s+|momentan\s+|gerade\s+|derzeit\s+|aktuell\s+|mittlerweile\s+|noch\s+|immer\s+noch\s+|seit\s+\S+\s+\S+\s+)*in\s+{PLACE}`},
		{"moved", `(?:ich\s+bin|wir\s+sind)\s+(?:{WHEN}\s+)?(?:nach|in)\s+{PLACE}\s+(?:gezogen|umgezogen)`},
		{"home-neg", `(?:ich|wir)\s+(?:wohne|wohnen|lebe|leben)\s+nicht\s+mehr\s+in\s+{PLACE}`},
		{"origin", `ich\s+(?:komme|bin)\s+aus\s+{PLACE}`},
		{"job", `(?:ich\s+)?bin\s+(?:jetzt\s+|inzwischen\s+|von\s+beruf\s+)?(?P<x>{JOB})(?P<at>\s+(?:bei|in|im|an|am|auf|für|beim)\s+[^,.;:!?]{1,80}?)?{END}`},
		{"home", `(?:ich\s+|wir\s+)?(?:wohne|wohnen|lebe|leben)\s+(?:jetzt\s+)?(?:in\s+der\s+nähe\s+von|bei)\s+{PLACE}`},
		{"moved", `(?:bin|sind)\s+(?:gerade\s+|vor\s+kurzem\s+)?(?:{WHEN}\s+)?(?:nach|in)\s+{PLACE}\s+(?:gezogen|umgezogen)`},
		{"age", `(?:bin|ich\s+bin)\s+(?:gerade\s+|letzte\s+woche\s+)?{NUM}\s+geworden`},
		{"pregnant", `ich\s+bin\s+(?:\w+\s+)?schwanger`},
		{"job", `(?:ich\s+)?arbeite\s+(?:jetzt\s+)?als\s+(?P<x>{JOB})(?P<at>\s+(?:bei|in|im|an\s+der|am)\s+[^,.;:!?]{1,80}?)?{END}`},
		{"job", `(?:ich\s+)?arbeite\s+(?:jetzt\s+)?als\s+{X}{END}`},
		{"job-neg", `ich\s+bin\s+(?:kein(?:e)?\s+{JOB}\s+mehr|nicht\s+mehr\s+{JOB})`},
		{"employer", `(?:ich\s+)?arbeite\s+(?:jetzt\s+|inzwischen\s+)?(?:(?:teilzeit|vollzeit|halbtags|freiberuflich|remote)\s+)?(?:bei|für|in|im)\s+(?:einer\s+|einem\s+|der\s+|dem\s+)?{ORG}{END}`},
		{"employer-neg", `ich\s+(?:(?:habe|hab)\s+(?:bei\s+)?{ORG}\s+gekündigt|arbeite\s+nicht\s+mehr\s+(?:bei|für)\s+{ORG}{END})`},
		{"diet", `(?:ich\s+bin|wir\s+sind|bin)\s+(?:jetzt\s+|inzwischen\s+|seit\s+[^,.;!?]{1,25}?\s+)?{DIET}{END}`},
		{"eats-again", `(?:ich\s+)?esse\s+(?:jetzt\s+)?(?P<again>wieder\s+)?(?P<food>fleisch|fisch|alles)`},
		{"diet-neg", `ich\s+bin\s+(?:kein(?:e)?\s+{DIET}\s+mehr|nicht\s+mehr\s+{DIET})`},
		{"~allergy-fix", `(?:gar\s+)?nicht\s+(?:gegen\s+|auf\s+)?{ALLERGEN}\s+allergisch,?\s+sondern\s+(?:gegen\s+|auf\s+)?(?P<y>[\p{L} -]{2,30}?){END}`},
		{"allergy", `keine\s+{ALLERGEN}\s+für\s+mich\b[^.!?]{0,30}?allergisch`},
		{"allergy", `ich\s+bin\s+(?:sehr\s+|stark\s+)?allergisch\s+(?:gegen|auf)\s+(?:{ALLERGEN}{END}|{X}{END})`},
		{"allergy", `ich\s+habe\s+eine\s+{ALLERGEN}-?allergie`},
		{"allergy-neg", `ich\s+bin\s+(?:nicht|nicht\s+mehr)\s+allergisch\s+(?:gegen|auf)\s+(?:{ALLERGEN}{END}|{X}{END})`},
		{"intolerance", `(?:ich\s+)?(?:habe?|hab)\s+(?:eine|ne|'ne)\s+{ALLERGEN}-?intoleranz`},
		{"intolerance", `ich\s+(?:habe\s+eine\s+{ALLERGEN}-?intoleranz|bin\s+{ALLERGEN}-?intolerant|vertrage\s+keine\s+{ALLERGEN})`},
		{"condition", `ich\s+(?:habe|bin)\s+{COND}`},
		{"condition", `(?:ich\s+)?(?:habe?|hab)\s+(?:eine?|ne|'ne)\s+{COND}`},
		{"job", `(?:ich\s+)?bin\s+(?:jetzt\s+|von\s+beruf\s+)?(?P<x>[\p{L}]*(?:ingenieur|lehrer|entwickler|berater|techniker|kaufmann|kauffrau|pfleger|ärztin|arzt|informatiker|elektriker|mechaniker|verkäufer|designer|manager|assistent|erzieher|sozialarbeiter|buchhalter|architekt|anwalt|anwältin|polizist|programmierer|redakteur|journalist|physiotherapeut)(?:in)?)\b`},
		{"job", `(?:ich\s+arbeite\s+)?(?:teilzeit|vollzeit)\s+als\s+(?P<x>[\p{L}]+)(?P<at>\s+(?:bei|in|im|für)\s+[^,.;:!?]{1,80}?)?{END}`},
		{"employer", `seit\s+[^,.;]{2,20}?\s+(?:bin\s+ich\s+)?bei\s+{ORG}{END}`},
		{"employer", `bin\s+ich\s+(?:jetzt\s+|inzwischen\s+)?bei\s+{ORG}{END}`},
		{"moved", `(?:wir\s+haben|ich\s+habe|(?:mein|meine)\s+[\p{L}]+(?:\s+[\p{L}]+)?\s+und\s+ich\s+haben)\s+(?:{WHEN}\s+)?(?:ein|eine)\s+(?:haus|wohnung)\s+in\s+{PLACE}\s+gekauft`},
		{"retired", `(?:ich\s+bin|bin\s+ich)\s+(?:seit\s+)?(?:{WHEN}\s+)?in\s+rente`},
		{"self-employed", `(?:ich\s+habe\s+mich|hab\s+mich)\s+(?:{WHEN}\s+)?(?P<x>selbstständig|selbständig)\s+gemacht`},
		{"married", `{NAME}\s+und\s+ich\s+haben\s+(?:{WHEN}\s+)?(?P<status>geheiratet)`},
		{"~named-age", `(?:der|die)\s+{NAME},?\s+ist\s+(?:[\p{L}]+\s+){0,3}?{NUM}(?:\s+jahre\s+alt)?(?:\s+geworden)?{END}`},
		{"possess", `ich\s+(?:habe?|hab)\s+(?:jetzt\s+|endlich\s+)?(?:ein|einen|eine)\s+(?P<y>[^.;!?]{2,40}?){END}`},
		{"member", `(?:mein|meine)\s+{REL}\s+heißt\s+{NAME}`},
		{"member", `(?:ich\s+)?(?:habe?|hab)\s+(?:eine|einen|ein)\s+{REL},?\s+{NAME}`},
		{"home", `(?:mein|meine)\s+[\p{L}]+\s+und\s+ich\s+(?:wohnen|leben)\s+(?:[^.;!?]{0,40}?\s+)?in\s+{PLACE}`},
		{"~count", `mit\s+unseren\s+{NUM}\s+{KIDS}`},
		{"allergy", `(?:ich\s+)?(?:habe?|hab)\s+(?:eine|ne)\s+{ALLERGEN}-?allergie`},
		{"member", `(?:mein|meine|unser|unsere)\s+{REL}\s+{NAME}(?:\s+ist\s+{NUM}(?:\s+jahre\s+alt)?)?`},
		{"~member", `mit\s+(?:meinem|meiner|meinen|unserem|unserer|unseren)\s+{REL},?\s+{NAME}`},
		{"member-cond", `(?:mein|meine|unser|unsere)\s+{REL}(?:\s+{NAME})?\s+(?:ist|hat)\s+{COND}`},
		{"member-intolerance", `(?:mein|meine|unser|unsere)\s+{REL}(?:\s+{NAME})?\s+(?:verträgt\s+kein(?:e|en)?\s+{ALLERGEN}|ist\s+{ALLERGEN}-?intolerant|hat\s+eine\s+{ALLERGEN}-?intoleranz)`},
		{"pronoun-cond", `(?P<pron>er|sie)\s+(?:ist|hat)\s+(?:eine?\s+)?{COND}`},
		{"pronoun-allergy", `(?P<pron>er|sie)\s+(?:ist|hat\s+eine)\s+(?:allergisch\s+gegen|allergie\s+gegen)\s+{ALLERGEN}`},
		{"pronoun-age", `(?P<pron>er|sie)\s+ist\s+{NUM}(?:\s+jahre\s+alt)?{END}`},
		{"member-allergy", `(?:mein|meine|unser|unsere)\s+{REL}(?:\s+{NAME})?\s+ist\s+allergisch\s+(?:gegen|auf)\s+(?:{ALLERGEN}{END}|{X}{END})`},
		{"count", `(?:ich\s+habe|wir\s+haben|habe)\s+(?:übrigens\s+|auch\s+)?{NUM}\s+{KIDS}`},
		{"~count", `mit\s+(?:meinen|unseren)\s+{NUM}\s+{KIDS}`},
		{"pets", `(?:ich\s+habe|wir\s+haben|habe)\s+(?:übrigens\s+|auch\s+)?{NUM}\s+{PETS}`},
		{"~pet", `(?:mein|meine|meinem|meinen|unser|unsere|unserem|unseren)\s+{PET}\s+{NAME}`},
		{"pet", `(?:ich\s+habe|wir\s+haben)\s+(?:einen|eine|ein)\s+{PET},?\s+(?:namens|der\s+heißt|die\s+heißt)\s+{NAME}`},
		{"pet", `(?:mein|meine|unser|unsere)\s+{PET}\s+heißt\s+{NAME}`},
		{"languages", `ich\s+spreche\s+{LANGS}`},
		{"married", `wir\s+haben\s+(?:{WHEN}\s+)?(?P<status>geheiratet)`},
		{"study", `(?:ich\s+)?studiere\s+(?:jetzt\s+)?{X}{END}`},
		{"team", `ich\s+halte\s+(?:schon\s+immer\s+|seit\s+[^,.;]{2,20}?\s+)?zu(?:m)?\s+{ORG}{END}`},
		{"team", `ich\s+bin\s+(?:ein\s+|eine\s+)?(?:großer|große|glühender|glühende|treuer|treue)\s+(?:fan|anhänger(?:in)?)\s+(?:von|des)\s+{ORG}{END}`},
		{"turning", `ich\s+werde\s+(?:[\p{L}]+\s+){0,3}?{NUM}(?:\s+jahre\s+alt)?{END}`},
		{"team", `(?:ich\s+bin\s+(?:jetzt\s+|inzwischen\s+|mittlerweile\s+)?fan\s+von|mein\s+lieblingsverein\s+ist)\s+{ORG}{END}`},
		{"team", `ich\s+bin\s+(?:[\p{L}]+\s+){0,4}?(?P<org>(?-i:\p{Lu})[\p{L}]+)-fan`},
		{"named-age", `{NAME},?\s+(?:ist\s+)?(?:[\p{L}]+\s+){0,3}?{NUM}\s+geworden`},
		{"named-age", `{NAME}\s+ist\s+(?:jetzt|nun|schon|inzwischen|mittlerweile)\s+{NUM}(?:\s+jahre(?:\s+alt)?)?{END}`},
		{"breakup", `mein(?:e)?\s+{REL}\s+und\s+ich\s+(?:haben\s+uns|sind)\s+(?:getrennt|geschieden)`},
		{"breakup", `{NAME}\s+und\s+ich\s+(?:haben\s+uns|sind)\s+(?:getrennt|geschieden|auseinander)`},
		{"breakup", `ich\s+habe\s+mich\s+von\s+{NAME}\s+getrennt`},
		{"dating", `ich\s+bin\s+(?:jetzt\s+|seit\s+kurzem\s+)?mit\s+{NAME}\s+zusammen`},
		{"learning", `ich\s+lerne\s+(?:jetzt\s+|gerade\s+)?(?P<l>{LANG1})`},
		{"possess", `ich\s+habe\s+jetzt\s+(?:ein|einen|eine)\s+(?P<y>[^,.;!?]{2,30}?){END}`},
		{"employer", `ich\s+bin\s+(?:jetzt|inzwischen|mittlerweile|seit\s+[^,.;]{2,20}?)\s+bei\s+{ORG}{END}`},
		{"job-doing", `(?:ich\s+)?fahre\s+(?:jetzt\s+|inzwischen\s+)?(?P<x>bus|taxi|lkw|lastwagen|straßenbahn|zug)\b`},
	},
}
