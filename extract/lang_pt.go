package extract

import "strings"

// portuguese is the slot table of Portuguese (see slots.go).
var portuguese = &langTable{
	code: "pt",
	relations: words(`sogra:mother-in-law sogro:father-in-law cunhada:sister-in-law cunhado:brother-in-law nora:daughter-in-law genro:son-in-law esposa:wife mulher:wife marido:husband esposo:husband parceiro:partner parceira:partner
		companheiro:partner companheira:partner namorada:girlfriend namorado:boyfriend noiva:fiancee noivo:fiance
		filho:son filha:daughter mãe:mother pai:father irmão:brother irmã:sister avó:grandmother avô:grandfather
		bebê:baby bebé:baby`),
	pets: words(`cachorros:dogs gatos:cats cachorro:dog cachorra:dog cão:dog cadela:dog gato:cat gata:cat gatinho:cat coelho:rabbit hamster:hamster
		papagaio:parrot cavalo:horse tartaruga:tortoise`),
	diets: words(`vegano:vegan vegana:vegan veganos:vegan vegetariano:vegetarian vegetariana:vegetarian
		vegetarianos:vegetarian pescetariano:pescatarian pescetariana:pescatarian`),
	jobs: words(`professor:teacher professora:teacher médico:doctor médica:doctor enfermeiro:nurse enfermeira:nurse
		advogado:lawyer advogada:lawyer engenheiro:engineer engenheira:engineer programador:programmer
		programadora:programmer desenvolvedor:developer desenvolvedora:developer designer:designer arquiteto:architect
		arquiteta:architect contador:accountant contadora:accountant cozinheiro:cook cozinheira:cook garçom:waiter
		garçonete:waitress empregado-de-mesa:waiter jornalista:journalist escritor:writer escritora:writer
		estudante:student farmacêutico:pharmacist farmacêutica:pharmacist dentista:dentist veterinário:vet
		veterinária:vet psicólogo:psychologist psicóloga:psychologist policial:police-officer bombeiro:firefighter
		tradutor:translator tradutora:translator fotógrafo:photographer fotógrafa:photographer músico:musician
		eletricista:electrician mecânico:mechanic funcionário-público:civil-servant pesquisador:researcher
		pesquisadora:researcher padeiro:baker padeira:baker`),
	allergens: words(`nozes:nuts castanhas:nuts frutos-secos:nuts amendoim:peanuts amendoins:peanuts frutos-do-mar:shellfish
		marisco:shellfish mariscos:shellfish camarão:shellfish peixe:fish ovo:eggs ovos:eggs leite:milk
		laticínios:dairy lacticínios:dairy glúten:gluten trigo:wheat soja:soy gergelim:sesame sésamo:sesame
		penicilina:penicillin látex:latex pólen:pollen gatos:cats cães:dogs cachorros:dogs abelhas:bees
		lactose:lactose morangos:strawberries`),
	languages: words(`português:Portuguese inglês:English espanhol:Spanish francês:French alemão:German italiano:Italian
		árabe:Arabic holandês:Dutch chinês:Chinese japonês:Japanese russo:Russian crioulo:Creole`),
	numbers:    numberWords("um:1 uma:1 dois:2 duas:2 três:3 quatro:4 cinco:5 seis:6 sete:7 oito:8 nove:9 dez:10"),
	children:   words(`filhos:children filhas:daughters crianças:children`),
	foods:      words(`carne:meat peixe:fish de-tudo:everything`),
	statuses:   words(`casamos:married divorciamos:divorced noivamos:engaged`),
	workplaces: words(`uma-farmácia:a-pharmacy um-hospital:a-hospital uma-escola:a-school um-banco:a-bank um-escritório:an-office uma-agência:an-agency`),
	conditions: words(`celíaco:celiac-disease celíaca:celiac-disease doença-celíaca:celiac-disease diabético:diabetes diabética:diabetes diabetes:diabetes asma:asthma epilepsia:epilepsy`),
	relDates: words(`no-mês-passado:last-month mês-passado:last-month mes-passado:last-month na-semana-passada:last-week semana-passada:last-week
		no-ano-passado:last-year ano-passado:last-year ontem:yesterday há-um-mês:a-month-ago há-um-ano:a-year-ago
		há-dois-anos:two-years-ago este-ano:this-year`),
	common:  []string{"me", "pra", "pro", "ano", "mudei", "muito", "aqui", "já", "só", "eu", "que", "um", "uma", "não", "com", "meu", "minha", "sou", "tenho", "para", "do", "da", "no", "na", "em", "mas", "moro", "estou", "olá", "oi", "você"},
	leads:   []string{"de fato", "na real", "acontece que", "descobri que", "fiquei a saber que", "afinal", "entretanto", "finalmente", "novidade", "gente", "sinceramente", "na verdade", "aliás", "olá", "oi", "agora", "também", "bom", "então", "enfim", "por falar nisso", "decidi que", "pois é"},
	joins:   []string{"e"},
	clauses: []string{"mas", "porque", "então", "pois", "e agora", "só que"},
	slips:   []string{`não,?\s+espera`, `quer\s+dizer`, `digo`, `desculpa`, `aliás`, `ou\s+melhor`},
	self:    strings.Fields(`eu meu minha meus minhas nós nosso nossa nossos nossas sou estou tenho moro trabalho estudo falo somos temos moramos trabalhamos comecei acabei larguei troquei fiz sigo trabalhei`),
	passing: strings.Fields(`hoje hoje-à-noite amanhã ontem esta-manhã esta-tarde este-fim-de-semana esta-semana agora-mesmo vou vamos segunda-feira terça-feira quarta-feira quinta-feira sexta-feira sábado domingo`),
	ifs:     strings.Fields(`se-eu se-a-gente se-nós imagina imagine suponha hipoteticamente digamos`),
	others:  strings.Fields(`amigo amiga amigos amigas colega colegas chefe vizinho vizinha primo prima`),
	kin:     strings.Fields(`irmão irmã irmãos mãe pai pais tio tia avó avô sobrinho sobrinha cunhado cunhada`),
	mine:    strings.Fields(`meu minha meus minhas nosso nossa nossos nossas`),
	topics:  words(`moro:home moramos:home apartamento:home apê:home bairro:home trabalho:job trabalhando:job emprego:job empresa:job firma:job alérgico:allergy alérgica:allergy alergia:allergy estudo:study faculdade:study curso:study mestrado:study torcedor:team torço:team time:team agora:now não-mais:change larguei:change troquei:change deixei:change mudança:home alugo:home aluguei:home contratado:job contratada:job demitido:job demitida:job aposentei:job terminamos:partner noivei:partner casei:partner separamos:partner mudamos:home+change mudei:home+change mudámos:home+change`),
	patterns: []rawPattern{
		{"team", `(?:sou\s+(?:fã|fanático|fanática)\s+(?:do|da)|torço\s+(?:muito\s+)?(?:para\s+o|pelo|pro|pra))\s+{ORG}{END}`},
		{"age", `com\s+{NUM}\s+anos,?\s+(?:eu\s+)?(?:já\s+|ainda\s+)?(?:me|sou|estou|tenho|continuo|não\s+)`},
		{"~moved-there", `(?:então\s+|e\s+)?(?:nos\s+mudamos|mudamos|me\s+mudei|mudei-me)(?:\s+{WHEN})?(?:\s+(?:in|on|em|en|im|au|le|no|na)\s+[\p{L}\d]+)?(?:\s*[.,!;]|\s*$)`},
		{"breakup", `(?:eu\s+e\s+(?:o\s+meu|a\s+minha|meu|minha)\s+{REL}|(?:o\s+meu|a\s+minha|meu|minha)\s+{REL}\s+e\s+eu)\s+(?:nos\s+separamos|separamos|terminamos)`},
		{"breakup", `terminei\s+com\s+(?:o\s+|a\s+)?{NAME}`},
		{"dating", `(?:agora\s+)?(?:eu\s+)?(?:estou|tô|to)\s+(?:namorando)\s+(?:o\s+|a\s+|com\s+(?:o\s+|a\s+)?)?{NAME}`},
		{"sold", `vendi\s+(?:o|a|meu|minha)\s+(?P<x>(?-i:\p{Lu})[\p{L}\d-]+(?:\s+(?-i:\p{Lu})[\p{L}\d-]+)?){END}`},
		{"possess", `comprei\s+(?:um|uma)\s+(?:novo\s+|nova\s+)?(?P<y>[^,.;!?]{2,40}?)(?:\s+(?:usado|usada|novo|nova|de|em|por)\b|{END})`},
		{"employer-neg", `(?:pedi\s+demissão|saí)\s+(?:d[ao]|de)\s+{ORG}{END}`},
		{"diet", `(?:virei|me\s+tornei|tornei-me|passei\s+a\s+ser)\s+{DIET}`},
		{"plays", `(?:eu\s+)?toco\s+(?:o\s+|a\s+)?(?P<x>{INSTR})`},
		{"instrument", `(?:estou\s+(?:a\s+)?aprend(?:endo|er)|tô\s+aprendendo|comecei\s+a\s+aprender)\s+(?:a\s+tocar\s+)?(?:o\s+|a\s+)?(?P<x>{INSTR})(?:\s+{WHEN})?`},
		{"name", `(?:(?:eu\s+)?me\s+chamo|meu\s+nome\s+é)\s+{NAME}`},
		{"name", `(?:eu\s+)?sou\s+(?:o|a)\s+{NAME}`},
		{"age", `(?:eu\s+)?tenho\s+{NUM}\s+anos`},
		{"home", `(?:eu\s+)?(?:moro|vivo|moramos|vivemos)\s+(?:agora\s+)?(?:em|no|na)\s+{PLACE}`},
		{"moved", `(?:eu\s+)?(?:me\s+mudei|nos\s+mudamos|mudei-me|mudamo-nos)\s+(?:para|pra|pro)\s+(?:o\s+|a\s+)?{PLACE}(?:,?\s+{WHEN})?`},
		{"moved", `(?:acabei\s+de\s+me\s+mudar|acabamos\s+de\s+nos\s+mudar)\s+(?:para|pra|pro)\s+(?:o\s+|a\s+)?{PLACE}`},
		{"home", `(?:eu\s+)?(?:moro|vivo|moramos)\s+perto\s+(?:de|do|da)\s+{PLACE}`},
		{"age", `(?:fiz|acabei\s+de\s+fazer)\s+{NUM}\s+anos`},
		{"pregnant", `estou\s+grávida`},
		{"home-neg", `(?:eu\s+)?(?:não\s+moro\s+mais|já\s+não\s+moro)\s+(?:em|no|na)\s+{PLACE}`},
		{"origin", `sou\s+de\s+{PLACE}`},
		{"breakup", `(?:eu\s+e\s+(?:a\s+|o\s+)?{NAME}|(?:a\s+|o\s+)?{NAME}\s+e\s+eu)\s+(?:terminamos|acabamos|nos\s+separamos|separamos)`},
		{"breakup", `terminei\s+com\s+(?:a\s+|o\s+)?{NAME}`},
		{"dating", `(?:agora\s+)?(?:namoro|estou\s+namorando|ando\s+com)\s+(?:com\s+)?(?:a\s+|o\s+)?{NAME}`},
		{"learning", `(?:estou\s+aprendendo|estou\s+a\s+aprender|aprendo)\s+(?P<l>{LANG1})`},
		{"possess", `(?:agora\s+)?tenho\s+(?:um|uma)\s+(?P<y>[^,.;!?]{2,30}?){END}`},
		{"study", `(?:agora\s+)?(?:faço|curso)\s+(?:faculdade\s+de\s+)?(?P<x>ci[êe]ncias?\s+da\s+computação|computação|sistemas\s+de\s+informação|engenharia(?:\s+[\p{L}]+)?|medicina|direito|arquitetura|enfermagem|psicologia|economia|administração|letras|história|biologia|química|física|informática|design)\b`},
		{"job", `(?:agora\s+)?sou\s+(?P<x>{JOB})(?P<at>\s+(?:de|em|na|no|numa|num|do|da|dos|das|pela|pelo)\s+[^,.;:!?]{1,80}?)?{END}`},
		{"job", `trabalho\s+(?:agora\s+)?como\s+(?:{JOB}|{X}){END}`},
		{"job-neg", `(?:não\s+sou\s+mais|já\s+não\s+sou)\s+{JOB}`},
		{"employer", `trabalho\s+(?:agora\s+)?(?:na|no|em|para\s+a|para\s+o|para)\s+{ORG}{END}`},
		{"employer-neg", `(?:saí|deixei|larguei|pedi\s+demissão)\s+(?:do|da|de)\s+{ORG}{END}`},
		{"employer-neg", `não\s+trabalho\s+mais\s+(?:na|no|em|para)\s+{ORG}{END}`},
		{"diet", `(?:sou|somos)\s+(?:agora\s+)?{DIET}{END}`},
		{"diet-neg", `(?:não\s+sou\s+mais|já\s+não\s+sou)\s+{DIET}`},
		{"diet", `sou\s+[^,.;!?]{1,40}?\s+e\s+{DIET}{END}`},
		{"eats-again", `(?:voltei\s+a\s+comer|como)\s+(?P<food>carne|peixe|de\s+tudo)(?P<again>\s+de\s+novo|\s+outra\s+vez)?`},
		{"~allergy-fix", `alérgic[oa]\s+(?:a\s+|ao\s+|à\s+|aos\s+|às\s+)?(?P<y>[^,.;]{1,40}?),?\s+(?:e\s+)?não\s+(?:a\s+|ao\s+|à\s+|aos\s+|às\s+)?{ALLERGEN}`},
		{"allergy", `nada\s+de\s+{ALLERGEN}\s+(?:pra|para)\s+mim\b[^.!?]{0,30}?al[ée]rgic`},
		{"allergy", `(?:sou|é)\s+(?:muito\s+)?alérgic[oa]s?\s+(?:a|ao|à|aos|às)\s+(?:{ALLERGEN}{END}|{X}{END})`},
		{"allergy", `tenho\s+alergia\s+(?:a|ao|à|aos|às)\s+(?:{ALLERGEN}{END}|{X}{END})`},
		{"allergy-neg", `não\s+sou\s+(?:mais\s+)?alérgic[oa]\s+(?:a|ao|à|aos|às)\s+(?:{ALLERGEN}{END}|{X}{END})`},
		{"intolerance", `sou\s+intolerante\s+(?:à|ao|a)\s+{ALLERGEN}`},
		{"condition", `(?:sou|tenho)\s+{COND}`},
		{"member", `(?:meu|minha)\s+{REL}\s+se\s+chama\s+{NAME}`},
		{"member", `(?:meu|minha)\s+{REL}\s+é\s+(?:a|o)\s+{NAME}`},
		{"member", `(?:o|a)\s+(?:meu|minha)\s+{REL}\s+{NAME}(?:\s+tem\s+{NUM}\s+anos)?`},
		{"named-age", `(?:o\s+|a\s+)?{NAME}\s+(?:fez|completou|já\s+tem|agora\s+tem)\s+{NUM}\s+anos`},
		{"moved", `(?:compr[áa]mos|comprei)\s+(?:uma\s+)?(?:casa|apartamento|apê)\s+(?:em|no|na)\s+{PLACE}(?:,?\s+{WHEN})?`},
		{"retired", `(?:reformei-me|aposentei-me|me\s+aposentei|me\s+reformei)(?:\s+{WHEN})`},
		{"married", `(?:eu\s+e\s+(?:o|a)\s+{NAME}|(?:o|a)\s+{NAME}\s+e\s+eu)\s+(?:nos\s+)?(?P<status>casamos|noivamos)`},
		{"job", `(?:consegui|arranjei|arrumei)\s+(?:um\s+)?(?:emprego|trabalho)\s+(?:como|de)\s+{X}{END}`},
		{"member", `(?:meu|minha|nosso|nossa)\s+{REL}\s+{NAME}(?:,?\s+(?:que\s+)?tem\s+{NUM}\s+anos)?`},
		{"~member", `com\s+(?:o\s+meu|a\s+minha|meu|minha|nosso|nossa)\s+{REL},?\s+(?:o\s+|a\s+)?{NAME}`},
		{"member-cond", `(?:meu|minha|nosso|nossa)\s+{REL}(?:\s+{NAME})?\s+(?:é|tem)\s+{COND}`},
		{"member-intolerance", `(?:meu|minha|nosso|nossa)\s+{REL}(?:\s+{NAME})?\s+é\s+intolerante\s+(?:à|ao|a)\s+{ALLERGEN}`},
		{"pronoun-cond", `(?P<pron>ele|ela)\s+(?:é|tem)\s+{COND}`},
		{"pronoun-allergy", `(?P<pron>ele|ela)\s+(?:é|tem)\s+(?:alérgic[oa]|alergia)\s+(?:a|ao|à|aos|às|de)\s+{ALLERGEN}`},
		{"pronoun-age", `(?P<pron>ele|ela)\s+tem\s+{NUM}\s+anos`},
		{"member-allergy", `(?:meu|minha|nosso|nossa)\s+{REL}(?:\s+{NAME})?\s+é\s+alérgic[oa]\s+(?:a|ao|à|aos|às)\s+(?:{ALLERGEN}{END}|{X}{END})`},
		{"count", `(?:tenho|temos)\s+{NUM}\s+{KIDS}`},
		{"~member", `(?:tenho|temos)\s+(?:um|uma)\s+{REL},?\s+(?:o\s+|a\s+)?{NAME}(?:,?\s+de\s+{NUM}\s+anos)?`},
		{"pets", `(?:tenho|temos)\s+{NUM}\s+{PETS}`},
		{"pet", `(?:tenho|temos)\s+(?:um|uma)\s+{PET}\s+(?:chamad[oa]|que\s+se\s+chama)\s+{NAME}`},
		{"pet", `(?:meu|minha|nosso|nossa)\s+{PET}\s+se\s+chama\s+{NAME}`},
		{"languages", `(?:eu\s+)?falo\s+{LANGS}`},
		{"married", `(?:nós\s+)?nos\s+(?P<status>casamos|divorciamos|noivamos)(?:\s+{WHEN})?`},
		{"study", `(?:estudo|estou\s+estudando|estou\s+a\s+estudar|faço\s+faculdade\s+de)\s+{X}{END}`},
		{"switched", `troquei\s+(?:o\s+)?(?:meu\s+|minha\s+)?(?P<x>[^,.;]{1,30}?)\s+por\s+(?:um|uma)\s+(?P<y>[^,.;!?]{1,30}?){END}`},
		{"team", `sou\s+(?P<club>flamenguista|corinthiana?|corintiana?|palmeirense|são-paulina?|sampaulina?|vascaína?|gremista|colorad[oa]|benfiquista|portista|sportinguista|santista|cruzeirense|atleticana?|botafoguense|tricolor)(?:[^\p{L}]|$)`},
		{"turning", `vou\s+fazer\s+{NUM}\s+anos`},
		{"team", `(?:sou\s+(?:torcedora?\s+)?(?:do|da)|torço\s+(?:para\s+o|pelo|pro)|meu\s+time(?:\s+favorito|\s+do\s+coração)?\s+é\s+o)\s+{ORG}{END}`},
	},
}
