package extract

import "strings"

// spanish is the slot table of Spanish (see slots.go).
var spanish = &langTable{
	code: "es",
	relations: words(`suegra:mother-in-law suegro:father-in-law cuñada:sister-in-law cuñado:brother-in-law nuera:daughter-in-law yerno:son-in-law esposa:wife mujer:wife marido:husband esposo:husband pareja:partner novia:girlfriend novio:boyfriend
		hijo:son hija:daughter madre:mother mamá:mother padre:father papá:father hermano:brother hermana:sister
		abuela:grandmother abuelo:grandfather prometida:fiancee prometido:fiance bebé:baby`),
	pets: words(`perros:dogs gatos:cats perro:dog perra:dog perrito:dog perrita:dog gato:cat gata:cat gatito:cat gatita:cat conejo:rabbit
		hámster:hamster loro:parrot caballo:horse tortuga:tortoise`),
	diets: words(`vegano:vegan vegana:vegan veganos:vegan veganas:vegan vegetariano:vegetarian vegetariana:vegetarian
		vegetarianos:vegetarian vegetarianas:vegetarian pescetariano:pescatarian pescetariana:pescatarian`),
	jobs: words(`profe:teacher maestra:teacher maestro:teacher profesor:teacher profesora:teacher maestro:teacher maestra:teacher médico:doctor médica:doctor
		doctora:doctor enfermero:nurse enfermera:nurse abogado:lawyer abogada:lawyer ingeniero:engineer ingeniera:engineer
		programador:programmer programadora:programmer diseñador:designer diseñadora:designer arquitecto:architect
		arquitecta:architect contable:accountant contador:accountant contadora:accountant cocinero:cook cocinera:cook
		camarero:waiter camarera:waitress periodista:journalist escritor:writer escritora:writer estudiante:student
		farmacéutico:pharmacist farmacéutica:pharmacist dentista:dentist veterinario:vet veterinaria:vet
		psicólogo:psychologist psicóloga:psychologist policía:police-officer bombero:firefighter traductor:translator
		traductora:translator fotógrafo:photographer fotógrafa:photographer músico:musician música:musician
		electricista:electrician fontanero:plumber mecánico:mechanic mecánica:mechanic funcionario:civil-servant
		funcionaria:civil-servant investigador:researcher investigadora:researcher`),
	allergens: words(`frutos-secos:nuts nueces:nuts cacahuetes:peanuts cacahuete:peanuts maní:peanuts marisco:shellfish
		mariscos:shellfish pescado:fish huevo:eggs huevos:eggs leche:milk lácteos:dairy gluten:gluten trigo:wheat
		soja:soy sésamo:sesame penicilina:penicillin látex:latex polen:pollen gatos:cats perros:dogs abejas:bees
		lactosa:lactose fresas:strawberries`),
	languages: words(`español:Spanish castellano:Spanish inglés:English portugués:Portuguese francés:French alemán:German
		italiano:Italian catalán:Catalan euskera:Basque gallego:Galician chino:Chinese japonés:Japanese árabe:Arabic
		ruso:Russian neerlandés:Dutch holandés:Dutch`),
	numbers:  numberWords("un:1 una:1 uno:1 dos:2 tres:3 cuatro:4 cinco:5 seis:6 siete:7 ocho:8 nueve:9 diez:10"),
	children: words(`hijos:children hijas:daughters niños:children niñas:daughters`),
	foods:    words(`carne:meat pescado:fish de-todo:everything`),
	statuses: words(`casamos:married casado:married casé:married comprometimos:engaged divorciamos:divorced divorcié:divorced`),
	workplaces: words(`una-tienda:a-shop un-hospital:a-hospital una-farmacia:a-pharmacy un-colegio:a-school una-escuela:a-school
		un-banco:a-bank una-oficina:an-office un-restaurante:a-restaurant`),
	conditions: words(`celíaco:celiac-disease celíaca:celiac-disease diabético:diabetes diabética:diabetes asma:asthma diabetes:diabetes epilepsia:epilepsy`),
	relDates: words(`el-mes-pasado:last-month la-semana-pasada:last-week el-año-pasado:last-year ayer:yesterday
		el-verano-pasado:last-summer hace-un-mes:a-month-ago hace-un-año:a-year-ago hace-dos-años:two-years-ago
		hace-dos-meses:two-months-ago este-año:this-year`),
	common:  []string{"de", "la", "el", "los", "las", "que", "y", "en", "un", "una", "mi", "mis", "me", "soy", "tengo", "es", "con", "por", "para", "del", "al", "lo", "pero", "muy", "estoy", "vivo", "trabajo", "hola", "mío", "ya"},
	leads:   []string{"de hecho", "ya estoy bien", "resulta que", "acontece que", "me enteré de que", "descubrí que", "me confirmaron que", "me dijeron que", "por fin", "te cuento", "al final", "entonces", "oye", "che", "la verdad", "en realidad", "por cierto", "bueno", "pues", "además", "también", "ahora", "hola", "oye", "mira", "al final", "he decidido que", "he decidido", "decidí que"},
	joins:   []string{"y", "e"},
	clauses: []string{"pero", "aunque", "porque", "así que", "pues", "y ahora", "ahora", "además"},
	slips:   []string{`no,?\s+espera`, `perdón`, `digo`, `quiero\s+decir`, `mejor\s+dicho`},
	self:    strings.Fields(`yo mi mis me conmigo nosotros nosotras nuestro nuestra nuestros nuestras soy estoy tengo vivo trabajo estudio hablo llevo somos tenemos vivimos trabajamos acabo empecé empiezo cambié dejé hago sigo`),
	passing: strings.Fields(`hoy esta-noche mañana ayer esta-mañana esta-tarde este-finde este-fin-de-semana esta-semana ahora-mismo voy-a vamos-a el-lunes el-martes el-miércoles el-jueves el-viernes el-sábado el-domingo`),
	ifs:     strings.Fields(`si imagina imagínate supongamos hipotéticamente pongamos digamos`),
	others:  strings.Fields(`amigo amiga amigos amigas compañero compañera compañeros jefe jefa vecino vecina primo prima`),
	kin:     strings.Fields(`hermano hermana hermanos hermanas madre padre mamá papá padres tío tía abuelo abuela sobrino sobrina cuñado cuñada`),
	mine:    strings.Fields(`mi mis me conmigo nuestro nuestra nuestros nuestras`),
	topics:  words(`vivo:home vivimos:home mudé:home mudamos:home mudado:home piso:home barrio:home trabajo:job trabajando:job empresa:job curro:job chamba:job renuncié:job puesto:job alérgico:allergy alérgica:allergy alergia:allergy estudio:study estudiando:study carrera:study universidad:study facultad:study máster:study hincha:team equipo:team laburo:job laburando:job chamba:job ahora:now ya-no:change cambié:change renuncié:change dejé:change en-vez:change mudanza:home alquilo:home alquilamos:home contrataron:job despidieron:job jubilé:job autónomo:job autónoma:job rompimos:partner casé:partner casamos:partner prometida:partner prometido:partner separamos:partner nos-mudamos:home+change`),
	patterns: []rawPattern{
		{"~count", `(?:mis|nuestros|nuestras)\s+{KIDS}[,:]?`},
		{"team", `(?:soy\s+(?:un\s+|una\s+)?(?:fan|forofo|forofa)\s+(?:de|del)|sigo\s+(?:al|a\s+los|a\s+la)|animo\s+al)\s+{ORG}{END}`},
		{"age", `con\s+{NUM}\s+años,?\s+(?:yo\s+)?(?:ya\s+|todavía\s+|aún\s+)?(?:me|soy|estoy|tengo|sigo|no\s+)`},
		{"~moved-there", `(?:así\s+que\s+|y\s+)?(?:nos\s+(?:mudamos|hemos\s+mudado)|me\s+(?:mudé|he\s+mudado))(?:\s+{WHEN})?(?:\s+(?:in|on|em|en|im|au|le|no|na)\s+[\p{L}\d]+)?(?:\s*[.,!;]|\s*$)`},
		{"dating", `(?:salgo\s+con)\s+alguien(?:\s+nuev[oa])?,?\s+(?:que\s+)?se\s+llama\s+{NAME}`},
		{"employer-neg", `(?:he\s+)?renunci[ée]\s+(?:a|en)\s+{ORG}{END}`},
		{"employer", `(?:ahora\s+)?(?:estoy|trabajo)\s+en\s+{ORG}\s+como\s+`},
		{"died", `{NAME}\s+se\s+nos\s+(?:fue|murió)`},
		{"dating", `(?:ahora\s+)?(?:estoy\s+)?(?:saliendo\s+con)\s+{NAME}`},
		{"diet", `me\s+(?:he\s+)?(?:pas[ée]|hice|volví)\s+(?:al?\s+|a\s+la\s+)?{DIET}`},
		{"plays", `(?:yo\s+)?toco\s+(?:el\s+|la\s+)?(?P<x>{INSTR})`},
		{"instrument", `(?:estoy\s+aprendiendo|empecé\s+a\s+aprender|aprendo)\s+(?:a\s+tocar\s+)?(?:el\s+|la\s+)?(?P<x>{INSTR})(?:\s+{WHEN})?`},
		{"name", `(?:me\s+llamo|mi\s+nombre\s+es)\s+{NAME}`},
		{"name", `soy\s+(?:el\s+|la\s+)?{NAME}(?:\s*$|\s*[,.!]|\s+y\b)`},
		{"age", `tengo\s+{NUM}\s+años`},
		{"named-age", `{NAME}\s+(?:ya\s+tiene|tiene\s+ya|ya\s+cumplió|cumplió|acaba\s+de\s+cumplir)\s+{NUM}(?:\s+años)?{END}`},
		{"home", `(?:(?:ahora|también|todavía|aún)\s+)?(?:vivo|vivimos|resido|residimos)\s+(?:ahora\s+)?en\s+{PLACE}`},
		{"moved", `(?:me|nos)\s+(?:acabo|acabamos)\s+de\s+mudar\s+a\s+{PLACE}`},
		{"moved", `(?:acabo|acabamos)\s+de\s+mudarnos?\s+a\s+{PLACE}`},
		{"home", `(?:vivo|vivimos)\s+cerca\s+de\s+{PLACE}`},
		{"home", `(?:estoy|estamos)\s+(?:ahora\s+)?viviendo\s+en\s+{PLACE}`},
		{"home", `(?:he|hemos)\s+vivido\s+(?:siempre\s+)?en\s+{PLACE}`},
		{"moved", `(?:me|nos)\s+(?:he\s+|hemos\s+)?(?:mudé|mudamos|mudado|trasladé|trasladamos)\s+a\s+{PLACE}(?:,?\s+{WHEN})?`},
		{"moved", `(?:me\s+fui|nos\s+fuimos)\s+a\s+vivir\s+a\s+{PLACE}(?:,?\s+{WHEN})?`},
		{"moved", `(?:compramos|compré)\s+(?:una\s+|la\s+)?(?:casa|piso|departamento|depa)\s+en\s+{PLACE}(?:,?\s+{WHEN})?`},
		{"retired", `me\s+(?:jubilé|retiré)(?:\s+{WHEN})`},
		{"self-employed", `(?:me\s+hice\s+(?P<x>autónom[oa])|trabajo\s+(?P<x2>por\s+mi\s+cuenta)\s+desde)(?:\s+{WHEN})`},
		{"job", `(?:conseguí|encontré)\s+(?:un\s+)?(?:trabajo|empleo|curro|laburo)\s+(?:de|como)\s+{X}{END}`},
		{"job-doing", `(?:ahora\s+)?doy\s+(?P<x>clases\s+de\s+[\p{L}]+)`},
		{"dating", `(?:salgo|estoy\s+saliendo)\s+con\s+alguien(?:\s+nuevo|\s+nueva)?,?\s+se\s+llama\s+{NAME}`},
		{"eats-again", `he\s+vuelto\s+a\s+comer\s+(?P<food>carne|pescado|pollo|de\s+todo)(?P<again>)`},
		{"quit-habit", `dej[ée]\s+(?:de\s+)?(?P<x>correr|nadar|fumar|beber|el\s+gimnasio|el\s+gym|el\s+fútbol|el\s+tenis|el\s+pádel|el\s+yoga|el\s+café)\b`},
		{"took-up", `(?:ahora\s+(?:hago|practico)|empecé\s+(?:con|a\s+hacer))\s+(?P<y>escalada|yoga|pilates|crossfit|natación|boxeo|pádel|padel|running|spinning)\b`},
		{"habit", `(?:salgo\s+a\s+|voy\s+a\s+)(?P<x>correr|nadar|caminar|el\s+gimnasio|el\s+gym)(?P<freq>\s+(?:todas\s+las\s+[\p{L}]+|todos\s+los\s+días|[\p{L}]+\s+veces\s+por\s+semana))?`},
		{"died", `se\s+(?:nos\s+|me\s+)?muri[óo]\s+{NAME}`},
		{"died", `{NAME}\s+(?:se\s+)?muri[óo]`},
		{"pet", `(?:hemos\s+adoptado|adoptamos|adopté|tenemos|tengo)\s+(?:un|una)\s+{PET}[^.!?]{0,30}?,?\s+se\s+llama\s+{NAME}`},
		{"pet", `(?:tengo|tenemos)\s+(?:un|una)\s+{PET},\s+{NAME}`},
		{"home-neg", `ya\s+no\s+(?:vivo|vivimos)\s+en\s+{PLACE}`},
		{"origin", `soy\s+de\s+{PLACE}`},
		{"breakup", `(?:mi\s+{REL}\s+y\s+yo|yo\s+y\s+mi\s+{REL})\s+(?:nos\s+separamos|nos\s+divorciamos|lo\s+dejamos|rompimos)`},
		{"breakup", `{NAME}\s+y\s+yo\s+(?:lo\s+)?(?:dejamos|rompimos|cortamos|terminamos|nos\s+separamos|nos\s+divorciamos)`},
		{"breakup", `(?:lo\s+dej[ée]|romp[íi]|cort[ée]|termin[ée])\s+con\s+{NAME}`},
		{"dating", `(?:ahora\s+)?(?:salgo|estoy\s+saliendo)\s+con\s+{NAME}`},
		{"learning", `(?:estoy\s+aprendiendo|aprendo|ahora\s+estudio|estudio)\s+(?P<l>{LANG1})`},
		{"possess", `(?:ahora\s+)?tengo\s+(?:un|una)\s+(?P<y>[^,.;!?]{2,30}?){END}`},
		{"switched", `vend[íi]\s+(?:el|la|mi)\s+(?P<x>[^,.;]{1,30}?)\s+y\s+(?:me\s+)?(?:compr[ée]|tengo)\s+(?:un|una)\s+(?P<y>[^,.;!?]{1,30}?){END}`},
		{"employer", `(?:entr[ée]|empec[ée])\s+(?:a\s+trabajar\s+)?(?:a|en)\s+{ORG}{END}`},
		{"job", `(?:ahora\s+)?soy\s+(?:un\s+|una\s+)?(?P<x>{JOB})(?P<at>\s+(?:de|en)\s+[^,.;:!?]{1,80}?)?{END}`},
		{"job", `(?:estoy\s+)?(?P<training>estudiando\s+para\s+ser|formándome\s+como)\s+(?P<x>[^,.;:!?]{1,50}?){END}`},
		{"job", `trabajo\s+(?:ahora\s+)?(?:como|de)\s+(?P<x>{JOB})(?P<at>\s+(?:de|en)\s+[^,.;:!?]{1,80}?)?{END}`},
		{"job", `trabajo\s+(?:ahora\s+)?(?:como|de)\s+{X}{END}`},
		{"age", `(?:acabo\s+de\s+cumplir|cumplí)\s+{NUM}`},
		{"pregnant", `estoy\s+embarazada`},
		{"job-neg", `ya\s+no\s+soy\s+{JOB}`},
		{"employer", `trabajo\s+(?:ahora\s+)?(?:en|para)\s+{ORG}{END}`},
		{"employer-neg", `(?:dejé|he\s+dejado|renuncié\s+a)\s+(?:mi\s+trabajo\s+en\s+)?(?:el\s+|la\s+|al\s+)?(?P<org>(?-i:\p{Lu})[\p{L}\d&'’.-]*(?:\s+[\p{L}\d&'’.-]+){0,3}?|estudio|bar|restaurante|banco|hospital|colegio|empresa|despacho|oficina|tienda){END}`},
		{"employer-neg", `ya\s+no\s+trabajo\s+(?:en|para)\s+{ORG}{END}`},
		{"diet", `(?:soy|somos)\s+(?:ahora\s+)?{DIET}`},
		{"diet", `soy\s+[^,.;!?]{1,40}?\s+y\s+{DIET}{END}`},
		{"eats-again", `(?:ya\s+)?(?:vuelvo\s+a\s+comer|como|volví\s+a\s+comer)\s+(?P<food>carne|pescado|de\s+todo)(?P<again>\s+otra\s+vez|\s+de\s+nuevo)?`},
		{"diet-neg", `ya\s+no\s+(?:soy|somos)\s+{DIET}`},
		{"~allergy-fix", `alérgic[oa]\s+(?:a\s+la\s+|a\s+los\s+|a\s+las\s+|al\s+|a\s+)?(?P<y>[^,.;]{1,40}?),?\s+(?:y\s+)?no\s+(?:a\s+la\s+|a\s+los\s+|a\s+las\s+|al\s+|a\s+)?{ALLERGEN}`},
		{"allergy", `nada\s+de\s+{ALLERGEN}\s+para\s+m[ií](?:[\s,;]|$)[^.!?]{0,30}?al[ée]rgic`},
		{"allergy", `(?:soy|es)\s+(?:muy\s+)?alérgic[oa]s?\s+(?:a|al)\s+(?:la\s+|las\s+|los\s+|el\s+)?(?:{ALLERGEN}{END}|{X}{END})`},
		{"allergy", `tengo\s+alergia\s+(?:a|al)\s+(?:la\s+|las\s+|los\s+|el\s+)?(?:{ALLERGEN}{END}|{X}{END})`},
		{"allergy-neg", `(?:ya\s+)?no\s+soy\s+alérgic[oa]\s+(?:a|al)\s+(?:la\s+|las\s+|los\s+|el\s+)?(?:{ALLERGEN}{END}|{X}{END})`},
		{"intolerance", `soy\s+intolerante\s+a\s+la\s+{ALLERGEN}`},
		{"condition", `(?:soy|tengo)\s+{COND}`},
		{"member", `mi\s+{REL}\s+se\s+llama\s+{NAME}`},
		{"member", `mi\s+{REL}\s+{NAME}(?:,?\s+(?:que\s+)?tiene\s+{NUM}\s+años)?`},
		{"~member", `(?:con|y)\s+(?:mi|nuestr[oa])\s+{REL},?\s+(?:el\s+|la\s+)?{NAME}`},
		{"member-cond", `mi\s+{REL}(?:\s+{NAME})?\s+(?:es|tiene)\s+{COND}`},
		{"member-intolerance", `mi\s+{REL}(?:\s+{NAME})?\s+es\s+intolerante\s+a\s+la\s+{ALLERGEN}`},
		{"pronoun-cond", `(?:(?P<pron>él|ella)\s+)?(?:es|tiene)\s+{COND}`},
		{"pronoun-allergy", `(?:(?P<pron>él|ella)\s+)?es\s+alérgic[oa]\s+(?:a\s+la|a\s+los|a\s+las|al|a)\s+{ALLERGEN}`},
		{"pronoun-age", `tiene\s+{NUM}\s+años`},
		{"member-allergy", `mi\s+{REL}(?:\s+{NAME})?\s+es\s+alérgic[oa]\s+(?:a|al)\s+(?:la\s+|las\s+|los\s+|el\s+)?(?:{ALLERGEN}{END}|{X}{END})`},
		{"count", `(?:tengo|tenemos)\s+{NUM}\s+{KIDS}`},
		{"pets", `(?:tengo|tenemos)\s+{NUM}\s+{PETS}`},
		{"pet", `(?:tengo|tenemos)\s+(?:un|una)\s+{PET}\s+(?:que\s+se\s+llama|llamad[oa])\s+{NAME}`},
		{"pet", `(?:mi|nuestr[oa])\s+{PET}\s+se\s+llama\s+{NAME}`},
		{"languages", `hablo\s+{LANGS}`},
		{"married", `nos\s+(?:hemos\s+)?(?P<status>casamos|casado|comprometimos|divorciamos)(?:\s+{WHEN})?`},
		{"married", `me\s+(?:he\s+)?(?P<status>casé|casado|divorcié)(?:\s+{WHEN})?`},
		{"study", `(?:estudio|estoy\s+estudiando)\s+{X}{END}`},
		{"switched", `cambié\s+(?:mi\s+)?(?P<x>[^,.;]{1,30}?)\s+por\s+(?:un|una)\s+(?P<y>[^,.;!?]{1,30}?){END}`},
		{"team", `soy\s+(?:hincha|aficionad[oa]|fan|seguidor[a]?)\s+(?:de|del)\s+{ORG}{END}`},
		{"team", `soy\s+(?P<club>culé|cule|madridista|merengue|colchoner[oa]|bético|bética|sevillista|xeneize|millonari[oa]|valencianista|periquit[oa])(?:[^\p{L}]|$)`},
		{"turning", `(?:voy\s+a\s+cumplir|cumplo)\s+{NUM}\b`},
		{"team", `(?:soy\s+(?:del|hincha\s+del|aficionad[oa]\s+del)|mi\s+equipo(?:\s+favorito)?\s+es\s+el)\s+{ORG}{END}`},
	},
}
