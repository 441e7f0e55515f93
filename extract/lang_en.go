package extract

import "strings"

// english is the slot table of English (see slots.go). The rules of
// rules.go read English too, for what is not a slot (preferences, habits,
// decisions, plans); where both read a statement, the slot's fact is kept.
var english = &langTable{
	code: "en",
	relations: words(`wife:wife husband:husband partner:partner spouse:spouse girlfriend:girlfriend boyfriend:boyfriend
		fiance:fiance fiancee:fiancee fiancé:fiance fiancée:fiancee son:son daughter:daughter mother:mother mom:mother mum:mother
		father:father dad:father brother:brother sister:sister grandmother:grandmother grandfather:grandfather
		grandma:grandmother grandpa:grandfather stepson:stepson stepdaughter:stepdaughter aunt:aunt uncle:uncle
		niece:niece nephew:nephew cousin:cousin baby:baby twins:child twin:child youngest:child eldest:child
		mother-in-law:mother-in-law father-in-law:father-in-law sister-in-law:sister-in-law brother-in-law:brother-in-law
		mil:mother-in-law fil:father-in-law hubby:husband missus:wife wifey:wife gf:girlfriend bf:boyfriend
		oldest:child little-one:child stepmom:stepmother stepdad:stepfather`),
	pets: words(`dog:dog dogs:dogs puppy:dog cat:cat cats:cats kitten:cat rabbits:rabbits labrador:dog lab:dog beagle:dog
		greyhound:greyhound spaniel:spaniel terrier:terrier poodle:poodle collie:collie retriever:retriever husky:husky
		dachshund:dachshund pug:pug corgi:corgi whippet:whippet lurcher:lurcher bulldog:bulldog rabbit:rabbit bunny:rabbit hamster:hamster parrot:parrot
		budgie:budgie horse:horse pony:pony tortoise:tortoise turtle:turtle guinea-pig:guinea-pig goldfish:goldfish
		gecko:gecko snake:snake ferret:ferret border-collie:border-collie cocker-spaniel:cocker-spaniel
		jack-russell:jack-russell golden-retriever:golden-retriever german-shepherd:german-shepherd
		french-bulldog:french-bulldog labradoodle:labradoodle cockapoo:cockapoo maine-coon:cat ragdoll:cat tabby:cat
		kelpie:kelpie heeler:heeler cavoodle:cavoodle staffy:staffy schnauzer:schnauzer dalmatian:dalmatian
		shih-tzu:shih-tzu westie:westie chihuahua:chihuahua sausage-dog:dachshund tortie:cat budgies:budgies
		hamsters:hamsters rabbits:rabbits`),
	diets: words(`eggetarian:eggetarian intermittent-fasting:intermittent-fasting pure-veg:vegetarian non-veg:meat-eater veg:vegetarian veggie:vegetarian plant-based:vegan vegetarian:vegetarian vegan:vegan pescatarian:pescatarian pescetarian:pescatarian
		flexitarian:flexitarian kosher:kosher halal:halal keto:keto paleo:paleo teetotal:teetotal`),
	jobs: words(`nurse:nurse doctor:doctor physician:physician surgeon:surgeon dentist:dentist pharmacist:pharmacist
		paramedic:paramedic midwife:midwife therapist:therapist psychologist:psychologist vet:vet veterinarian:veterinarian
		teacher:teacher professor:professor lecturer:lecturer tutor:tutor researcher:researcher scientist:scientist
		engineer:engineer developer:developer programmer:programmer designer:designer architect:architect lawyer:lawyer
		attorney:attorney solicitor:solicitor judge:judge accountant:accountant banker:banker analyst:analyst
		consultant:consultant manager:manager chef:chef cook:cook baker:baker barista:barista bartender:bartender
		waiter:waiter waitress:waitress cashier:cashier receptionist:receptionist librarian:librarian journalist:journalist
		writer:writer author:author editor:editor translator:translator photographer:photographer artist:artist
		musician:musician actor:actor actress:actress electrician:electrician plumber:plumber carpenter:carpenter
		mechanic:mechanic farmer:farmer gardener:gardener pilot:pilot firefighter:firefighter nanny:nanny
		student:student freelancer:freelancer salesperson:salesperson coach:coach trainer:trainer hairdresser:hairdresser
		driver:driver cleaner:cleaner sparky:electrician sparkie:electrician chippy:carpenter tradie:tradesperson
		actuary:actuary barrister:barrister paralegal:paralegal sonographer:sonographer radiographer:radiographer
		phlebotomist:phlebotomist bookkeeper:bookkeeper underwriter:underwriter dev:developer quantity-surveyor:quantity-surveyor surveyor:surveyor
		recruiter:recruiter teaching-assistant:teaching-assistant landlord:landlord landlady:landlady receptionist:receptionist social-worker:social-worker software-engineer:software-engineer
		data-scientist:data-scientist civil-servant:civil-servant police-officer:police-officer 
		cpa:accountant paramedic:paramedic physio:physiotherapist physiotherapist:physiotherapist carer:carer
		caregiver:caregiver dietitian:dietitian optician:optician surveyor:surveyor welder:welder chemist:chemist
		economist:economist estate-agent:estate-agent teaching-assistant:teaching-assistant midwife:midwife
		software-developer:software-developer ux-designer:ux-designer product-manager:product-manager`),
	allergens: words(`nuts:nuts peanuts:peanuts peanut:peanuts tree-nuts:tree-nuts shellfish:shellfish fish:fish
		eggs:eggs egg:eggs milk:milk dairy:dairy gluten:gluten wheat:wheat soy:soy soya:soy sesame:sesame
		penicillin:penicillin latex:latex pollen:pollen cats:cats dogs:dogs bees:bees wasps:wasps mustard:mustard
		celery:celery lactose:lactose strawberries:strawberries kiwi:kiwi`),
	languages: words(`english:English spanish:Spanish portuguese:Portuguese french:French german:German italian:Italian
		dutch:Dutch polish:Polish russian:Russian ukrainian:Ukrainian chinese:Chinese mandarin:Mandarin
		cantonese:Cantonese japanese:Japanese korean:Korean arabic:Arabic hindi:Hindi urdu:Urdu bengali:Bengali
		turkish:Turkish greek:Greek swedish:Swedish norwegian:Norwegian danish:Danish finnish:Finnish czech:Czech
		hungarian:Hungarian romanian:Romanian catalan:Catalan basque:Basque galician:Galician hebrew:Hebrew
		vietnamese:Vietnamese thai:Thai tagalog:Tagalog swahili:Swahili irish:Irish welsh:Welsh tamil:Tamil telugu:Telugu
		malayalam:Malayalam kannada:Kannada marathi:Marathi gujarati:Gujarati punjabi:Punjabi yoruba:Yoruba igbo:Igbo
		hausa:Hausa zulu:Zulu isizulu:Zulu isixhosa:Xhosa sesotho:Sesotho setswana:Setswana twi:Twi ga:Ga ewe:Ewe
		amharic:Amharic somali:Somali kinyarwanda:Kinyarwanda sinhala:Sinhala nepali:Nepali odia:Odia assamese:Assamese
		konkani:Konkani maori:Maori samoan:Samoan xhosa:Xhosa afrikaans:Afrikaans persian:Persian farsi:Persian pashto:Pashto
		indonesian:Indonesian malay:Malay filipino:Filipino croatian:Croatian serbian:Serbian bosnian:Bosnian
		slovak:Slovak slovenian:Slovenian bulgarian:Bulgarian lithuanian:Lithuanian latvian:Latvian estonian:Estonian
		icelandic:Icelandic albanian:Albanian armenian:Armenian georgian:Georgian amharic:Amharic somali:Somali
		nepali:Nepali sinhala:Sinhala khmer:Khmer burmese:Burmese mongolian:Mongolian kazakh:Kazakh uzbek:Uzbek
		portugese:Portuguese sign-language:sign-language asl:ASL bsl:BSL`),
	numbers:  englishNumbers(),
	children: words(`kids:children children:children sons:sons daughters:daughters kid:children child:children boys:sons girls:daughters`),
	conditions: words(`celiac-disease:celiac-disease coeliac-disease:celiac-disease celiac:celiac-disease coeliac:celiac-disease
		diabetes:diabetes diabetic:diabetes asthma:asthma asthmatic:asthma epilepsy:epilepsy epileptic:epilepsy
		dementia:dementia alzheimer's:alzheimer's parkinson's:parkinson's autism:autism autistic:autism adhd:ADHD
		dyslexia:dyslexia dyslexic:dyslexia copd:COPD crohn's:crohn's ibs:IBS arthritis:arthritis migraines:migraines
		hypertension:high-blood-pressure`),
	foods:    words(`meat:meat fish:fish chicken:chicken dairy:dairy everything:everything`),
	statuses: words(`married:married engaged:engaged divorced:divorced`),
	relDates: words(`last-month:last-month last-week:last-week last-year:last-year yesterday:yesterday
		last-summer:last-summer last-winter:last-winter last-spring:last-spring last-autumn:last-autumn
		this-year:this-year a-month-ago:a-month-ago a-year-ago:a-year-ago two-years-ago:two-years-ago
		two-months-ago:two-months-ago recently:recently`),
	leads:   []string{"by the way", "btw", "fyi", "for context", "for the record", "just so you know", "update", "quick update", "honestly", "actually", "in real life", "seriously", "ok", "okay", "so", "well", "anyway", "also", "i've decided", "i have decided", "i decided", "i realised", "i realized", "i guess", "turns out", "sadly", "luckily", "unfortunately", "confession", "big news", "good news", "news"},
	joins:   []string{"and", "&"},
	slips:   []string{`no\s+wait\s+sorry`, `no,?\s*wait,?\s+sorry`, `no,?\s+sorry`, `sorry,?\s+no`, `no\s+wait`, `no,\s*wait`, `wait,?\s+no`, `sorry`, `i\s+mean`, `i\s+meant`, `make\s+that`, `actually`},
	self:    strings.Fields(`i i'm i've i'd i'll my me mine myself we we're we've our ours us ^been ^living ^working ^studying ^upgraded ^replaced ^swapped ^switched ^moved ^started ^quit ^bought ^sold ^joined ^traded ^changed ^dropped ^gave ^signed`),
	passing: strings.Fields(`today tonight tomorrow yesterday this-morning this-afternoon this-evening this-weekend this-week right-now at-the-moment just-now later on-monday on-tuesday on-wednesday on-thursday on-friday on-saturday on-sunday this-friday this-saturday this-sunday tonite next-week next-month this-term i'm-going-to i'll gonna planning`),
	ifs:     strings.Fields(`if imagine suppose supposing hypothetically what-if pretend say-i let's-say`),
	others:  strings.Fields(`friend friends colleague colleagues coworker co-worker coworkers boss manager neighbour neighbor neighbours neighbors cousin flatmate roommate classmate oga mate's nan's`),
	kin:     strings.Fields(`brother brothers sister sisters mum mom mother dad father parents cousin uncle aunt auntie nan grandma grandpa grandmother grandfather nephew niece in-laws`),
	mine:    strings.Fields(`my mine me myself our ours us`),
	topics:  words(`live:home lives:home living:home based:home moved:home move:home settled:home flat:home apartment:home neighbourhood:home neighborhood:home work:job works:job working:job job:job career:job employer:job company:job firm:job office:job hired:job quit:job promoted:job boyfriend:partner girlfriend:partner husband:partner wife:partner partner:partner fiance:partner fiancee:partner fiancé:partner fiancée:partner dating:partner married:partner divorced:partner missus:partner hubby:partner allergic:allergy allergy:allergy allergies:allergy vegan:diet vegetarian:diet pescatarian:diet veggie:diet halal:diet kosher:diet meat:diet study:study studying:study degree:study major:study majoring:study university:study uni:study college:study phd:study masters:study master's:study fan:team support:team supporter:team team:team club:team unis:study campus:study undergrad:study undergraduate:study postgrad:study bachelor's:study bachelors:study resigned:job resign:job now:now switched:change switching:change instead:change anymore:change no-longer:change any-more:change quit:change changed:change relocated:home+change relocating:home relocate:home renting:home rent:home lease:home redundant:job laid-off:job freelance:job self-employed:job engaged:partner broke-up:partner split-up:partner separated:partner divorce:partner wedding:partner plant-based:diet nowadays:now these-days:now`),
	patterns: []rawPattern{
		{"~count", `(?:our|my)\s+(?:two\s+|three\s+)?{KIDS}[,:]?`},
		{"team", `(?:(?:huge|big|massive|die-?hard|lifelong|proud)\s+)?(?P<org>(?-i:\p{Lu})[\p{L}\d&'’.-]*(?:\s+(?-i:\p{Lu})[\p{L}\d&'’.-]*){0,2})\s+(?:fan|supporter)\s+here\b`},
		{"team", `my\s+(?:football\s+|footy\s+|soccer\s+|rugby\s+|hockey\s+|baseball\s+|basketball\s+)?(?:team|club)\s+is\s+(?:the\s+)?{ORG}{END}`},
		{"team", `i\s+(?:follow|cheer\s+for|am\s+for)\s+(?:the\s+)?{ORG}\s+(?:in\s+the\s+|religiously|every\s+week|since)`},
		{"team", `i(?:'m|\s+am)\s+(?:an?\s+)?(?P<org>(?-i:\p{Lu})[\p{L}\d&'’.-]*(?:\s+(?-i:\p{Lu})[\p{L}\d&'’.-]*){0,3})\s+(?:through\s+and\s+through|till\s+i\s+die|fan\s+for\s+life)`},
		{"age", `i(?:'m|\s+am)\s+{NUM}\s+(?:this\s+year|years\s+young)`},
		{"age", `(?:i(?:'m|\s+am)\s+)?aged\s+{NUM}\b`},
		{"diet", `i\s+(?:only\s+)?eat\s+(?:only\s+)?{DIET}`},
		{"~moved-there", `(?:so\s+|and\s+)?(?:we|i)(?:'ve|\s+have)?\s+(?:just\s+|finally\s+)?moved(?:\s+(?:there|here|over))?(?:\s+{WHEN})?(?:\s+(?:in|on|em|en|im|au|le|no|na)\s+[\p{L}\d]+)?(?:\s*[.,!;]|\s*$)`},
		{"employer", `(?:i\s+)?(?:just\s+)?got\s+(?:hired|a\s+job|taken\s+on|an\s+offer)\s+(?:at|by|with|from)\s+{ORG}(?:\s+as\s+(?:a|an)\s+[^,.;!?]{2,30}?)?{END}`},
		{"employer-neg", `(?:i\s+)?(?:just\s+|finally\s+)?handed\s+in\s+my\s+notice\s+(?:at|to)\s+{ORG}{END}`},
		{"self-employed", `(?:i(?:'ve|\s+have)\s+)?(?:gone|went)\s+(?P<x>out\s+on\s+my\s+own)`},
		{"self-employed", `i(?:'ve|\s+have)?\s+(?:just\s+)?(?:started|set\s+up|launched|opened)\s+my\s+own\s+(?P<x>business|company|firm|practice|shop)(?:\s+(?:called|named)\s+{ORG}{END})?`},
		{"breakup", `(?:me\s+and\s+my|my)\s+{REL}\s+(?:and\s+(?:i|me)\s+)?(?:have\s+|'ve\s+)?(?:just\s+|finally\s+|recently\s+)?(?:split(?:\s+up)?|broke\s+up|separated|(?:got\s+)?divorced)`},
		{"breakup", `{NAME}\s+and\s+(?:i|me)\s+(?:have\s+|'ve\s+)?(?:just\s+|finally\s+)?(?:broken\s+up|broke\s+up|split(?:\s+up)?|separated)`},
		{"dating", `i(?:'m|\s+am)\s+(?:now\s+)?(?P<verb>engaged\s+to|married\s+to|with)\s+{NAME}(?:\s+now)?{END}`},
		{"learning", `i(?:'m|\s+am)\s+(?:now\s+)?doing\s+(?P<l>{LANG1})(?:\s+now|\s+instead)?{END}`},
		{"quit-habit", `(?:i\s+)?(?:gave\s+up\s+on|had\s+to\s+(?:quit|give\s+up|stop))\s+(?:the\s+|my\s+)?(?P<x>{ACT})\b`},
		{"quit-habit", `(?:i\s+)?(?:gave\s+up(?:\s+on)?|quit|dropped|stopped)\s+(?:learning\s+)?(?P<x>{LANG1})`},
		{"took-up", `i(?:'m|\s+am)\s+(?:now\s+)?doing\s+(?P<y>{ACT})`},
		{"diet", `i\s+(?:have\s+|'ve\s+)?(?:turned|become|gone|went)\s+(?:fully\s+|completely\s+|full\s+)?{DIET}`},
		{"possess", `(?:i\s+)?(?:just\s+|finally\s+)?(?:got|bought|purchased)\s+myself\s+(?:a|an)\s+(?:new\s+)?(?P<y>[^,.;!?]{2,40}?)(?:\s+(?:from|with|for|last|this|after|in|finally)\b|{END})`},
		{"gave-away", `(?:i\s+)?(?:gave|passed|handed)\s+(?:the|my|our)\s+(?:old\s+)?(?P<x>[^,.;!?]{1,30}?)\s+(?:to|on\s+to)\s+(?:my|a|our)\b`},
		{"switched", `(?:i\s+)?(?:just\s+|finally\s+)?traded\s+(?:the|my|our)\s+(?P<x>[^,.;]{1,30}?)\s+in\s+for\s+(?:a|an)\s+(?P<y>[^,.;!?]{1,30}?)(?:\s+(?:last|this|yesterday|today)\b|{END})`},
		{"med-switch", `(?:my\s+(?:gp|doctor|doc|psychiatrist|consultant)\s+|they\s+)?(?:switched|changed|moved)\s+me\s+from\s+(?P<x>[\p{L}-]+)\s+to\s+(?P<y>[\p{L}-]+)`},
		{"medication", `i(?:'m|\s+am)\s+(?:now\s+|still\s+)?on\s+(?P<y>[\p{L}-]+(?:ine|ol|am|ide|pam|lam|one|pril|sartan|statin|mab|zole|cillin|mycin|formin|xin|pram))\b`},
		{"name", `my\s+name(?:'s|\s+is)\s+{NAME}`},
		{"name", `(?:call\s+me|i\s+go\s+by|myself)\s+{NAME}`},
		{"job", `i(?:'m|\s+am)\s+{NAME},\s+(?:a\s+|an\s+)?(?P<x>(?:[\p{L}-]+\s+){0,2}?{JOB})(?P<at>\s+(?:at|in|for|with|on|based\s+in|from)\s+[^,.;:!?]{1,80}?)?{END}`},
		{"job", `i(?:'m|\s+am)\s+(?:a|an)\s+(?P<x>(?-i:RN|GP|LPN|CNA|HCA|NP|PA|TA|HGV\s+driver))\b(?P<at>\s+(?:at|in|for|with|on)\s+[^,.;:!?]{1,80}?)?`},
		{"job", `(?:i'm\s+|i\s+am\s+)?(?:going|gone|went)\s+(?P<x>contracting|freelance|self-employed|solo|part-time)`},
		{"name", `i(?:'m|\s+am)\s+{NAME}(?:\s*$|\s*[,.!;]|\s+(?:and|from|here|by|btw|but|nice|now)\b|\s+[-–—])`},
		{"age", `i(?:'m|\s+am)\s+(?:now\s+|actually\s+|only\s+|just\s+|really\s+)?{NUM}(?:\s+years?\s+old|\s+y/?o)?(?:\s+(?:actually|now|already|today))?{END}`},
		{"age", `i\s+(?:just\s+)?turned\s+{NUM}\b`},
		{"age", `(?:i(?:'m|\s+am)|as)\s+an?\s+{NUM}[- ]years?[- ]old\b`},
		{"age", `\(?(?P<num>[1-9]\d)\s?(?-i:[FM])(?:\)|,|\s*$)`},
		{"age", `i\s+(?:just\s+|finally\s+)?(?:hit|reached)\s+{NUM}(?:\s+(?:last|this|on|yesterday|today)\b|{END})`},
		{"age", `at\s+{NUM},?\s+i\b`},
		{"age-range", `i(?:'m|\s+am)\s+in\s+my\s+(?P<x>(?:(?:early|mid|late)[- ])?(?:twenties|thirties|forties|fifties|sixties|seventies|eighties|[2-8]0s))`},
		{"home", `(?:i|we)(?:'m|'re|\s+am|\s+are)?\s+(?:(?:still|now|currently|also|all)\s+)?(?:live|living|reside|residing|based)\s+in\s+{PLACE}`},
		{"home", `(?:my\s+|our\s+)?home(?:\s+for\s+(?:me|us))?\s+is\s+(?:in\s+)?{PLACE}`},
		{"home", `(?:i|we)(?:'ve|\s+have)\s+(?:always\s+)?lived\s+in\s+{PLACE}`},
		{"home", `(?:(?:i|we)(?:'m|'re|\s+am|\s+are)?\s+)?(?:now\s+)?(?:based\s+(?:out\s+of|near)|living\s+near|live\s+near)\s+{PLACE}`},
		{"home", `(?:i|we)\s+(?:just\s+|finally\s+|recently\s+)?(?:bought|rent|rented|found)\s+(?:a\s+|our\s+)?(?:place|house|flat|apartment|home|condo)\s+in\s+{PLACE}`},
		{"home", `we(?:'re|\s+are)\s+(?:now\s+|still\s+)?(?:in|based\s+in)\s+{PLACE}{END}`},
		{"home", `(?:(?:i|we)(?:'m|'re|\s+am|\s+are)\s+)?(?:now\s+|currently\s+)?(?:living|based)\s+in\s+{PLACE}`},
		{"home", `(?:me\s+and\s+(?:my|the)\s+[\p{L}-]+(?:\s+(?-i:\p{Lu})\p{Ll}+)?|(?:my|our)\s+[\p{L}-]+(?:\s+(?-i:\p{Lu})\p{Ll}+)?\s+and\s+i)\s+(?:now\s+)?(?:live|are\s+living|are\s+based)\s+in\s+{PLACE}`},
		{"home", `we(?:'re|\s+are)\s+(?:now\s+)?staying\s+in\s+{PLACE}{END}`},
		{"home", `(?:i|we)(?:'m|'re|\s+am|\s+are)\s+in\s+{PLACE}\s+(?:now|these\s+days)\b`},
		{"moved", `(?:(?:i|we)(?:'ve|\s+have)?\s+)?(?:just\s+|finally\s+)?settled\s+(?:down\s+)?in\s+{PLACE}`},
		{"property", `i\s+(?:also\s+)?own\s+(?P<num>a|an|one|two|three|four|five|\d+)\s+(?P<x>flats?|houses?|properties|property|apartments?|homes?)(?:\s+in\s+{PLACE})?`},
		{"moved", `(?:(?:i|we)(?:'ve|\s+have)?\s+)?(?:just\s+|recently\s+|finally\s+)?(?:moved|relocated)\s+(?:back\s+)?to\s+{PLACE}(?:,?\s+{WHEN})?`},
		{"moved", `(?:i|we)\s+(?:just\s+|finally\s+)?(?:moved\s+into|bought)\s+(?:our|my|a|the)\s+(?:[\p{L}-]+\s+){0,2}?(?:flat|house|home|apartment|place|condo|bungalow)\s+in\s+{PLACE}(?:,?\s+{WHEN})?`},
		{"married", `(?:me\s+and\s+my\s+{REL}\s+{NAME}|my\s+{REL}\s+{NAME}\s+and\s+i)\s+(?:just\s+|finally\s+)?got\s+(?P<status>married|engaged)(?:\s+{WHEN})?`},
		{"joined", `(?:i\s+)?(?:just\s+|recently\s+)?joined\s+(?P<org>(?-i:\p{Lu})[\p{L}\d&'’.-]*(?:\s+(?-i:\p{Lu})[\p{L}\d&'’.-]*){0,3})(?:\s+{WHEN})?`},
		{"retired", `i\s+(?:just\s+|finally\s+)?retired(?:\s+from\s+[^,.;!?]{2,40}?)?(?:\s+{WHEN})`},
		{"self-employed", `i\s+(?:went|became|have\s+been|'ve\s+been)\s+(?P<x>self-employed|freelance|independent)(?:\s+{WHEN})`},
		{"origin", `i\s+grew\s+up\s+in\s+{PLACE}`},
		{"home-neg", `(?:i|we)\s+(?:don't|do\s+not|no\s+longer)\s+live\s+in\s+{PLACE}`},
		{"origin", `i(?:'m|\s+am)\s+(?:originally\s+)?from\s+{PLACE}`},
		{"job", `i(?:'m|\s+am)\s+(?:now\s+|currently\s+|still\s+|actually\s+|really\s+)?(?:a|an|the)\s+(?P<x>(?:[\p{L}\d-]+\s+){0,2}?{JOB})(?P<at>\s+(?:at|in|for|with|on|based\s+in|from)\s+[^,.;:!?]{1,80}?)?(?:\s+(?:there|here|now|too|as\s+well|myself))?{END}`},
		{"job", `i(?:'m|\s+am)?\s+(?:now\s+|currently\s+)?(?:\w+ly\s+)?(?:work|working)\s+(?:\w+ly\s+)?as\s+(?:a|an)\s+(?P<x>[^,.;:!?]{1,60}?){END}`},
		{"job", `i\s+(?:now\s+)?(?P<verb>teach|nurse|coach|tutor)\s+(?P<x>[^,.;:!?]{1,50}?){END}`},
		{"job", `i\s+(?P<verb>run|own|have)\s+(?P<x>(?:my\s+own|a|an)\s+(?:[\p{L}-]+\s+){0,2}?(?:bakery|business|company|restaurant|cafe|café|shop|store|salon|studio|practice|agency|firm|startup|farm|clinic|bar|pub|garage|gym)\b[^,.;:!?]{0,30}?){END}`},
		{"job", `i(?:'m|\s+am)\s+(?:now\s+)?(?P<x>freelancing|self-employed|freelance|unemployed|between\s+jobs|job\s+hunting|on\s+maternity\s+leave|on\s+paternity\s+leave|retired|a\s+stay-at-home\s+(?:mum|mom|dad|parent)|a\s+homemaker|a\s+housewife)\b`},
		{"field", `i\s+(?:now\s+)?work\s+in\s+(?P<x>(?-i:[a-z])[\p{L} -]{1,30}?){END}`},
		{"job", `i(?:'ve|\s+have|'m|\s+am)?\s+(?:just\s+)?(?:started\s+)?(?P<training>training|retraining)\s+(?:as|to\s+be(?:come)?)\s+(?:a|an)\s+(?P<x>[^,.;:!?]{1,60}?){END}`},
		{"job", `i(?:'ve|\s+have)?\s+(?:just\s+)?(?:became|become)\s+(?:a|an)\s+{JOB}`},
		{"job-neg", `i(?:'m|\s+am)\s+(?:no\s+longer\s+(?:a|an)\s+{JOB}|not\s+(?:a|an)\s+{JOB}\s+any\s*more)`},
		{"employer", `i(?:'m|\s+am)?\s+(?:now\s+|currently\s+|still\s+)?(?:work|working)\s+(?:(?P<how>nights|days|weekends|shifts|part[- ]time|full[- ]time|remotely|from\s+home)\s+)?(?:at|for|with)\s+{ORG}{END}`},
		{"employer", `i(?:'ve|\s+have)\s+been\s+(?:at|with)\s+(?P<org>(?-i:\p{Lu})[\p{L}\d&'’.-]*(?:\s+(?-i:\p{Lu})[\p{L}\d&'’.-]*){0,3})\s+(?P<since>(?:for|since)\s+[^,.;!?]{2,25})`},
		{"employer-neg", `i(?:'m|\s+am)\s+(?:no\s+longer|not)\s+(?:with|at)\s+{ORG}(?:\s+any\s*more)?{END}`},
		{"employer", `i(?:'ve|\s+have)?\s+(?:just\s+|recently\s+)?(?:started|joined)\s+(?:at\s+|working\s+(?:at|for)\s+)?(?P<org>(?-i:\p{Lu})[\p{L}\d&'’.-]*(?:\s+(?-i:\p{Lu})[\p{L}\d&'’.-]*){0,3})`},
		{"job", `i\s+(?:just\s+|finally\s+)?got\s+(?P<verb>promoted)\s+to\s+(?P<x>[^,.;:!?]{1,50}?){END}`},
		{"employer-neg", `i(?:'ve|\s+have)?\s+(?:just\s+)?(?:handed\s+in\s+my\s+notice|resigned|been\s+laid\s+off|was\s+(?:laid\s+off|made\s+redundant|fired|let\s+go))\s+(?:at|from)\s+{ORG}{END}`},
		{"employer-neg", `i(?:'ve|\s+have)?\s+(?:just\s+)?(?:quit|left)\s+my\s+(?:job|position|role)\s+(?:at|with)\s+{ORG}{END}`},
		{"employer-neg", `i(?:'ve|\s+have)?\s+(?:just\s+)?(?:quit|left)\s+(?P<org>the\s+(?:bank|company|firm|agency|hospital|school|startup|restaurant|shop|store|office|factory|hotel|bakery|cafe|café|clinic|university|lab|newspaper|council|ministry|army|navy|practice|studio|warehouse))\b`},
		{"employer-neg", `i(?:'ve|\s+have)?\s+(?:just\s+)?(?:quit|left)\s+(?P<org>(?-i:\p{Lu})[\p{L}\d&'’.-]*(?:\s+(?-i:\p{Lu})[\p{L}\d&'’.-]*){0,3}){END}`},
		{"employer-neg", `i\s+(?:no\s+longer|don't)\s+work\s+(?:at|for)\s+{ORG}{END}`},
		{"diet", `(?:i|we)(?:'m|'re|\s+am|\s+are)\s+(?:now\s+|all\s+|strictly\s+|fully\s+|also\s+|actually\s+|really\s+|still\s+|a\s+)*{DIET}{END}`},
		{"diet", `(?:i|we)(?:'ve|\s+have)\s+been\s+{DIET}`},
		{"diet", `(?:i(?:'m|\s+am)\s+)?doing\s+{DIET}\s+(?:now|these\s+days|instead)\b`},
		{"diet", `i(?:'m|\s+am)\s+(?:a\s+)?(?:total\s+|strict\s+|proper\s+)?{DIET}(?:\s+(?:guy|girl|person|family|household))\b`},
		{"diet", `(?:i|we)(?:'ve|\s+have)?\s+(?:just\s+|recently\s+|finally\s+)?(?:gone|went|turned|become|became)\s+(?:fully\s+)?{DIET}`},
		{"named-diet", `{NAME}\s+(?:has\s+been|is|'s\s+been|'s)\s+(?:a\s+|strictly\s+)?{DIET}`},
		{"named-cond", `{NAME}\s+(?:is|has|'s)\s+(?:a\s+)?(?:type\s+(?P<type>[12])\s+)?{COND}`},
		{"named-allergy", `{NAME}\s+is\s+(?:(?:very|also|really|[a-z]+ly)\s+)?allergic\s+to\s+(?:{ALLERGEN}{END}|{X}{END})`},
		{"named-age", `{NAME}\s+(?:just\s+)?(?:turned|is\s+now|turns)\s+{NUM}\b`},
		{"named-age", `{NAME}\s+(?:is|'s)\s+{NUM}(?:\s+years?\s+old|\s*(?:yo|y/o))?{END}`},
		{"eats-again", `i(?:'m|\s+am)\s+back\s+on\s+(?:(?:red|white|real|proper)\s+)?(?P<food>meat|fish|dairy)(?P<again>)`},
		{"pregnant", `i(?:'m|\s+am)\s+(?:\w+\s+)?pregnant`},
		{"diet", `(?:i'm|i\s+am)\s+[^,.;!?]{1,40}?\s+and\s+{DIET}{END}`},
		{"diet-neg", `i(?:'m|\s+am)\s+(?:no\s+longer\s+(?:a\s+)?{DIET}|not\s+(?:a\s+)?{DIET}\s+(?:any\s*more|at\s+all))`},
		{"eats-again", `i(?:'m|\s+am)?\s*(?:eating|eat|started\s+eating)\s+(?P<food>meat|fish|chicken|dairy|everything)\s+(?P<again>again)`},
		{"eats-again", `i\s+eat\s+(?P<food>everything)`},
		{"allergy", `i(?:'m|\s+am)\s+(?:(?:very|also|really|[a-z]+ly)\s+)?allergic\s+to\s+(?:(?:all|most)\s+)?(?:{ALLERGEN}{END}|{X}{END})`},
		{"allergy", `i\s+(?:have|'ve\s+got|have\s+got)\s+(?:a|an)\s+(?:(?:severe|mild|serious|bad)\s+)?(?:{ALLERGEN}\s+)allergy`},
		{"cleft-allergy", `it(?:'s|\s+is|\s+was)\s+(?:{ALLERGEN}|{X})\s+(?:that\s+)?i(?:'m|\s+am)\s+allergic\s+to,?\s+not\s+(?P<not>[\p{L} -]{2,30}?){END}`},
		{"allergy-neg", `i(?:'m|\s+am)\s+(?:not|no\s+longer)\s+allergic\s+to\s+(?:{ALLERGEN}{END}|{X}{END})`},
		{"intolerance", `i(?:'m|\s+am)\s+{ALLERGEN}[\s-](?:intolerant|free)`},
		{"avoid", `i\s+(?:can't|cannot|can\s+not)\s+(?P<verb>have|eat|tolerate|digest|drink|do|handle|stomach)\s+(?:any\s+)?{ALLERGEN}`},
		{"allergy", `(?:no|zero)\s+{ALLERGEN}\s+for\s+me\b[^.!?]{0,30}?\ballerg`},
		{"allergy", `(?:(?:severe|serious|bad|mild)\s+)?{ALLERGEN}\s+allergy\s+here\b`},
		{"allergy", `{ALLERGEN}\s+(?:make|makes|give|gives)\s+me\s+(?:break\s+out|hives|a\s+rash|sick|ill|swell|an\s+allergic\s+reaction|anaphyla)`},
		{"condition", `i\s+(?:have|'ve\s+got|was\s+diagnosed\s+with)\s+(?:type\s+(?P<type>[12])\s+)?{COND}`},
		{"condition", `(?:i(?:'m|\s+am)|as)\s+an?\s+(?:type\s+(?P<type>[12])\s+)?{COND}`},
		{"~condition", `\(\s*{COND}\b`},
		{"pronoun-cond", `(?P<pron>he|she)(?:'s|\s+is|\s+has)\s+(?:a\s+)?(?:type\s+(?P<type>[12])\s+)?{COND}`},
		{"pronoun-allergy", `(?P<pron>he|she)(?:'s|\s+is)\s+(?:(?:very|severely|also|really|badly)\s+)?allergic\s+to\s+(?:{ALLERGEN}{END}|{X}{END})`},
		{"member", `my\s+{REL}(?:'s\s+name\s+is|\s+is\s+called|\s+is\s+named|,)?\s+{NAME}(?:,?\s+(?:who\s+is|is|who's|he's|she's|aged)\s+{NUM}(?:\s+years?\s+old)?)?`},
		{"~member", `(?:with|and)\s+(?:my|our)\s+{REL},?\s+{NAME}`},
		{"~member-cond", `my\s+{REL},?\s+who\s+(?:has|is)\s+(?:a\s+)?{COND}`},
		{"household", `my\s+{REL}(?:\s+{NAME})?\s+(?:also\s+)?(?:lives|is\s+living|stays|is\s+staying)\s+with\s+(?:us|me)\b`},
		{"kids-ages", `my\s+(?P<kids>kids|children|boys|girls|sons|daughters|twins)\s+are\s+(?P<ages>\d{1,2}(?:\s*(?:,|and|&)\s*\d{1,2}){1,5})\b`},
		{"child-unnamed", `(?:i|we){HAVE}\s+(?:a|an|one)\s+(?P<x>teenage|teenaged|young|little|toddler|newborn|baby|grown(?:-up)?|adult)\s+(?P<rel>son|daughter|boy|girl)\b`},
		{"child-unnamed", `(?:i|we){HAVE}\s+a\s+(?P<x>newborn|new\s+baby|toddler|teenager)\b`},
		{"member-cond", `(?:my|our)\s+{REL}(?:\s+{NAME})?\s+(?:is|has)\s+(?:a\s+)?(?:type\s+(?P<type>[12])\s+)?{COND}`},
		{"member-intolerance", `(?:my|our)\s+{REL}(?:\s+{NAME})?\s+(?:is\s+{ALLERGEN}[\s-]intolerant|(?:can't|cannot)\s+(?:have|eat|tolerate)\s+{ALLERGEN})`},
		{"member", `(?:our|my)\s+{REL},?\s+{NAME}(?:,?\s+(?:is|just\s+turned|turned)\s+{NUM})?`},
		{"member", `(?:i|we)\s+(?:have|'ve\s+got|have\s+got)\s+(?:a|an|one)\s+{REL}(?:,|\s+(?:named|called))\s+{NAME}`},
		{"~count", `(?:my|our)\s+{NUM}\s+{KIDS}`},
		{"pronoun-age", `(?P<pron>he|she)(?:'s|\s+is)\s+(?:actually\s+|now\s+|really\s+)?{NUM}(?:\s+years?\s+old)?{END}`},
		{"pronoun-age", `(?:(?P<pron>he|she)\s+)?(?:just\s+)?turned\s+{NUM}\b`},
		{"member-allergy", `my\s+{REL}(?:\s+{NAME})?\s+is\s+(?:(?:very|severely|also)\s+)?allergic\s+to\s+(?:{ALLERGEN}{END}|{X}{END})`},
		{"count", `(?:i|we){HAVE}\s+{NUM}\s+(?:[\p{L}-]+\s+)?{KIDS}`},
		{"count", `(?:i(?:'m|\s+am)\s+)?(?:a\s+)?(?:single\s+|proud\s+|busy\s+|working\s+)?(?:mom|mum|mam|dad|mother|father|parent)\s+(?:of|to)\s+{NUM}(?P<kids>)`},
		{"pets", `(?:i|we){HAVE}\s+{NUM}\s+(?:[\p{L}-]+\s+)?{PETS}`},
		{"pet", `(?:i|we){HAVE}\s+(?:a|an|one)\s+(?:[\p{L}-]+\s+){0,2}?{PET}(?:\s+(?:call(?:e)?d|named)|,)\s+{NAME}(?:\s+{WHEN})?`},
		{"~pet", `(?:my|our)\s+(?:old\s+|little\s+|new\s+|lazy\s+)?{PET}(?:'s\s+name\s+is|\s+is\s+called|\s+is\s+named|,)?\s+{NAME}(?P<died>\s+(?:passed\s+away|died))?`},
		{"languages", `i\s+(?:speak|can\s+speak)\s+{LANGS}`},
		{"languages", `i(?:'m|\s+am)\s+(?:fluent|bilingual)\s+in\s+{LANGS}`},
		{"languages", `my\s+(?:native\s+language|mother\s+tongue|first\s+language)\s+is\s+{LANGS}`},
		{"sold", `(?:i|we)\s+(?:just\s+)?sold\s+(?:the|my|our)\s+(?P<x>car|house|flat|bike|motorbike|motorcycle|van|boat)`},
		{"sold", `(?:i|we)\s+(?:just\s+|finally\s+)?sold\s+(?:the|my|our)\s+(?P<x>(?-i:\p{Lu})[\p{L}\d-]+(?:\s+(?-i:\p{Lu})[\p{L}\d-]+)?)(?:\s+(?:in\s+the\s+end|at\s+last|finally|yesterday|today|last\s+[\p{L}]+))?{END}`},
		{"possess", `(?:i|we)\s+(?:just\s+|finally\s+)?(?:got|bought|purchased|picked\s+up|leased)\s+(?:a|an|the|my|our)\s+(?:new\s+|second-hand\s+|used\s+|shiny\s+)?(?P<y>[^,.;!?]{2,40}?)(?:\s+(?:from|with|for|last|this|after|in)\b|{END})`},
		{"study", `(?:i(?:'ve|\s+have)?\s+)?(?:started|starting|doing|i'm\s+doing|began)\s+(?:a\s+|my\s+)?(?:master'?s|masters|phd|doctorate|msc|mba|degree|diploma|postgrad)\s+(?:degree\s+)?in\s+{X}{END}`},
		{"quit-habit", `(?:i|we)\s+(?:just\s+|finally\s+)?(?:quit|gave\s+up|stopped|dropped|packed\s+in)\s+(?:going\s+to\s+)?(?:the\s+|my\s+)?(?P<x>{ACT})\b`},
		{"took-up", `(?:i|we)\s+(?:just\s+|recently\s+)?(?:took\s+up|started|got\s+into|picked\s+up)\s+(?P<y>{ACT})\b`},
		{"took-up", `i(?:'m|\s+am)\s+(?:really\s+|totally\s+)?into\s+(?P<y>{ACT})(?:\s+now|\s+these\s+days)\b`},
		{"team", `i(?:'m|\s+am)\s+(?:now\s+)?supporting\s+{ORG}{END}`},
		{"dating", `(?:i(?:'ve|\s+have)?\s+)?(?:been\s+)?(?:seeing|dating)\s+someone(?:\s+new)?[^.!?]{0,20}?(?:his|her|their)\s+name(?:'s|\s+is)\s+{NAME}`},
		{"married", `(?:{NAME}\s+and\s+i|we)(?:\s+are|'re|’re)\s+(?:now\s+|officially\s+)*(?P<status>married|engaged|divorced|separated)`},
		{"died", `{NAME}\s+(?:didn't\s+make\s+it|is\s+gone|crossed\s+the\s+rainbow\s+bridge)`},
		{"pet", `(?:i|we){HAVE}\s+(?:a|an|one)\s+(?:[\p{L}-]+\s+){0,2}?{PET}[^.!?]{0,30}?(?:(?:his|her|its)\s+name(?:'s|\s+is)|call(?:e)?d|named)\s+{NAME}`},
		{"switched", `(?:(?:i|we)(?:'ve|\s+have)?\s+)?(?:just\s+|finally\s+)?traded\s+in\s+(?:the\s+|my\s+|our\s+)?(?P<x>[^,.;]{1,30}?)(?:,|\s+and|\s+for)\s+(?:got\s+|bought\s+)?(?:a|an|the)\s+(?P<y>[^,.;!?]{1,30}?){END}`},
		{"team", `my\s+(?:favou?rite|fav)\s+(?:football\s+|soccer\s+|basketball\s+|baseball\s+|hockey\s+)?(?:team|club)\s+is\s+{ORG}{END}`},
		{"team", `i\s+(?:[\p{L}]+ly\s+)?(?:support|root\s+for)\s+(?:the\s+)?{ORG}{END}`},
		{"team", `{ORG}\s+(?:fan|supporter)\s+(?:since|for|all)\b`},
		{"team", `i(?:'ve|\s+have)?\s+switched\s+(?:allegiance|teams|sides|clubs)\s+to\s+{ORG}{END}`},
		{"married", `(?:(?P<name>(?-i:\p{Lu})[\p{Ll}'’-]+)\s+and\s+i|i|we)\s+(?:just\s+|finally\s+)?(?:got\s+)?(?P<status>married|engaged|divorced|separated)(?:\s+{WHEN})?`},
		{"diet-neg", `i\s+(?:stopped|quit)\s+being\s+(?:a\s+)?{DIET}`},
		{"died", `(?:(?:my|our)\s+(?:old\s+|beloved\s+)?(?:{PET}\s+)?)?{NAME}\s+(?:died|passed\s+away|has\s+died|passed)\b`},
		{"study", `i(?:'m|\s+am)\s+(?:now\s+)?(?:studying|doing\s+a\s+degree\s+in|majoring\s+in)\s+{X}{END}`},
		{"done-with", `i(?:'m|\s+am)\s+(?:done|finished|through)\s+with\s+{X}{END}`},
		{"switched", `(?:i\s+|we\s+)?(?:just\s+|finally\s+)?sold\s+(?:the|my|our)\s+(?P<x>[^,.;]{1,30}?)\s+and\s+(?:got|bought)\s+(?:a|an)\s+(?P<y>[^,.;!?]{1,30}?){END}`},
		{"breakup", `(?:{NAME}\s+and\s+i|me\s+and\s+{NAME}|i\s+and\s+{NAME})\s+(?:have\s+|'ve\s+)?(?:just\s+|finally\s+|recently\s+)?(?:split(?:\s+up)?|broke\s+up|separated|called\s+it\s+(?:off|quits))`},
		{"breakup", `i\s+(?:just\s+|finally\s+|recently\s+)?(?:broke\s+up\s+with|split\s+(?:up\s+)?(?:with|from)|dumped)\s+{NAME}`},
		{"dating", `i(?:'m|\s+am)\s+(?:now\s+)?(?P<verb>seeing|dating|going\s+out\s+with)\s+{NAME}`},
		{"habit", `i\s+(?:go\s+to\s+(?:the\s+)?|hit\s+the\s+|do\s+)(?P<x>gym|pool|climbing\s+wall|yoga|pilates|crossfit|spin(?:\s+class(?:es)?)?|park\s*run|boxing)(?P<freq>\s+(?:every\s+[\p{L}]+|(?:once|twice|[\p{L}\d]+\s+times)\s+a\s+week|on\s+[\p{L}]+s|daily|most\s+days))?\b`},
		{"learning", `i(?:'m|\s+am)\s+(?:now\s+|currently\s+|also\s+)?(?:trying\s+to\s+learn|learning)\s+(?:some\s+)?(?P<l>{LANG1})`},
		{"home", `live\s+in\s+{PLACE}{END}`},
		{"home", `i(?:'ve|\s+have)\s+been\s+living\s+in\s+{PLACE}`},
		{"home", `i(?:'m|\s+am)\s+(?:currently\s+|now\s+)?living\s+in\s+{PLACE}`},
		{"home", `(?:i|we)(?:'re|\s+are|\s+am)?\s+(?:now\s+|just\s+)?(?:stay|shifting\s+to|shifted\s+to|based\s+out\s+of)\s+(?:(?:a|an|our)\s+(?:new\s+)?[\p{L}\d]+\s+)?(?:in\s+)?{PLACE}`},
		{"dating", `i(?:'m|\s+am)\s+(?:now\s+)?(?:seeing|dating)\s+someone(?:\s+new)?(?:\s+now)?,\s+{NAME}`},
		{"team", `i\s+(?:[\p{L}]+ly\s+)?(?:barrack|go)\s+for\s+(?:the\s+)?{ORG}{END}`},
		{"instrument", `i(?:'ve|\s+have)?\s+(?:just\s+|recently\s+)?(?:started|began|begun)\s+(?:learning|playing|lessons\s+(?:on|in))\s+(?:the\s+)?(?P<x>{INSTR})(?:\s+{WHEN})?`},
		{"instrument", `i(?:'m|\s+am)\s+(?:now\s+|currently\s+)?learning\s+(?:to\s+play\s+)?(?:the\s+)?(?P<x>{INSTR})`},
		{"plays", `i\s+(?:also\s+)?play\s+(?:the\s+)?(?P<x>{INSTR})`},
		{"no-drive", `i\s+(?:don't|do\s+not|can't|cannot)\s+drive\b`},
		{"~home-in", `\b(?:here|back\s+home)\s+in\s+{PLACE}{END}`},
		{"born", `(?:(?:our|my|a)\s+)?baby\s+(?P<sex>girl|boy)[,:]?\s+{NAME}`},
		{"born", `(?:our|my)\s+new\s+(?:baby\s+)?(?P<rel>daughter|son|baby)[,:]?\s+{NAME}`},
		{"home-in", `i(?:'m|\s+am)\s+in\s+{PLACE}(?:\s*\([^)]{1,30}\))?(?:\s+(?:side|area))?{END}`},
		{"name", `{NAME}\s+here(?:\s*[,!.—–-]|\s+from\b)`},
		{"job", `{NAME}\s+here,\s+(?:a\s+|an\s+)?(?P<x>(?:[\p{L}-]+\s+){0,2}?{JOB})(?P<at>\s+(?:at|in|for|with|on|from)\s+[^,.;:!?]{1,80}?)?{END}`},
		{"job", `i(?:'m|\s+am)\s+[^,.;!?]{2,40}?,\s+(?:a\s+|an\s+)?(?P<x>(?:[\p{L}-]+\s+){0,2}?{JOB})(?P<at>\s+(?:at|in|for|with)\s+[^,.;:!?]{1,80}?){END}`},
		{"swapped", `(?:i\s+)?(?:swapped|traded|switched)\s+(?P<x>[^,.;]{2,30}?)\s+for\s+(?P<y>[^,.;!?]{2,30}?){END}`},
		{"swapped", `i\s+(?:gave\s+up|quit|dropped|stopped)\s+(?P<x>[^,.;]{2,30}?)(?:,|\s+and)\s+(?:i(?:'m|\s+am)\s+(?:(?:really\s+)?into|doing|learning|playing)|(?:i\s+)?(?:took\s+up|started|do|play))\s+(?P<y>[^,.;!?]{2,30}?){END}`},
		{"team", `(?:i(?:'ve|\s+have)?\s+)?(?:switched|changed)\s+(?:to\s+supporting|allegiance\s+to|sides\s+to)\s+{ORG}{END}`},
		{"employer", `(?:i\s+)?(?:left|quit)\s+(?-i:\p{Lu})[^,.;]{0,30}?\s+for\s+(?:a\s+(?:[\p{L}-]+\s+){0,2}(?:called|named)\s+)?{ORG}{END}`},
		{"job-doing", `i(?:'m|\s+am)\s+(?P<x>(?:driving|teaching|nursing|cooking|cleaning|delivering|tutoring|coaching|bartending|waitressing|waiting\s+tables)\b[^,.;!?]{0,30}?)\s+(?:now|these\s+days|full[- ]time|for\s+a\s+living)\b`},
		{"allergy-fix", `it\s+(?:isn't|is\s+not|wasn't|was\s+not|'s\s+not)\s+(?:the\s+)?{ALLERGEN},?\s+(?:it's|it\s+is|it\s+was)\s+(?:actually\s+)?(?P<y>[\p{L} -]{2,30}?)(?:\s+(?:that\s+)?i(?:'m|\s+am)\s+allergic\s+to)?{END}`},
		{"allergy-fix", `it(?:'s|\s+is)\s+not\s+(?:the\s+)?{ALLERGEN}\s+(?:that\s+)?i(?:'m|\s+am)\s+allergic\s+to,?\s+(?:it's|it\s+is)\s+(?:actually\s+)?(?P<y>[\p{L} -]{2,30}?){END}`},
		{"~allergy-fix", `allergic\s+to\s+(?P<y>[^,.;]{1,40}?),?\s+(?:and\s+)?not\s+(?:to\s+)?{ALLERGEN}`},
		{"cleft-allergy", `it(?:'s|\s+is|\s+was)\s+(?:actually\s+)?{ALLERGEN}\s+(?:that\s+)?i(?:'m|\s+am)\s+allergic\s+to`},
		{"eats-again", `i\s+(?:now\s+)?(?:eat|have)\s+(?P<food>meat|fish|chicken|dairy|eggs|pork|beef|seafood)\s+(?P<again>again)`},
		{"diet-neg", `i\s+(?:just\s+|finally\s+)?(?:dropped|quit|gave\s+up|stopped|ditched)\s+(?:doing\s+|being\s+)?{DIET}`},
		{"study", `i\s+(?:switched|changed)\s+my\s+(?:major|degree|course)\s+to\s+{X}{END}`},
		{"switched", `i\s+(?:finally\s+|just\s+|also\s+)?(?:caved\s+and\s+|gave\s+in\s+and\s+)?(?:switched|changed|upgraded)\s+(?:from\s+(?P<x>[^,.;]{1,30}?)\s+)?to\s+(?P<y>[^,.;!?]{1,30}?){END}`},
		{"team", `i(?:'m|\s+am)\s+an?\s+(?P<org>(?-i:\p{Lu})[\p{L}\d&'’.-]*(?:\s+(?-i:\p{Lu})[\p{L}\d&'’.-]*){0,3})\s+(?:fan|supporter){END}`},
		{"team", `i(?:'m|\s+am)\s+an?\s+(?:massive|huge|big|die-?hard|lifelong|long-suffering|proud|loyal|mad|diehard|devoted|passionate)\s+(?P<org>(?-i:\p{Lu})[\p{L}\d&'’.-]*(?:\s+(?-i:\p{Lu})[\p{L}\d&'’.-]*){0,3})\s+(?:fan|supporter)\b`},
		{"team", `i(?:'ve|\s+have)\s+(?:had\s+)?(?:a\s+)?season\s+ticket\s+(?:at|for)\s+(?P<org>(?-i:\p{Lu})[\p{L}\d&'’.-]*(?:\s+(?-i:\p{Lu})[\p{L}\d&'’.-]*){0,3})`},
		{"turning", `i(?:'m|\s+am)\s+turning\s+{NUM}\b`},
		{"turning", `my\s+(?P<num>[1-9]\d)(?:st|nd|rd|th)\s+birthday\b`},
		{"born-year", `i\s+was\s+born\s+in\s+(?P<year>19[2-9]\d|20[0-2]\d)\b`},
		{"rather", `i(?:'d|\s+would)\s+(?:much\s+)?rather\s+(?P<x>[^,.;!?]{2,40}?)\s+than\s+(?P<y>[^,.;!?]{2,40}?){END}`},
		{"activity", `i(?:'ve|\s+have)\s+been\s+(?P<verb>learning|studying|playing|practi[cs]ing|taking)\s+{X}\s+(?P<since>(?:for\s+(?:about\s+|around\s+|almost\s+|nearly\s+|over\s+)?(?:a|an|one|two|three|four|five|six|\d+)\s+(?:weeks?|months?|years?)|since\s+(?:\d{4}|last\s+\w+|[\p{L}]+)))`},
	},
}

// englishNumbers are the numbers said in words, to ninety-nine.
func englishNumbers() map[string]int {
	m := numberWords(`one:1 a:1 an:1 two:2 three:3 four:4 five:5 six:6 seven:7 eight:8 nine:9 ten:10 eleven:11
		twelve:12 thirteen:13 fourteen:14 fifteen:15 sixteen:16 seventeen:17 eighteen:18 nineteen:19`)
	tens := []string{"twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"}
	units := []string{"one", "two", "three", "four", "five", "six", "seven", "eight", "nine"}
	for i, t := range tens {
		m[t] = 20 + 10*i
		for j, u := range units {
			m[t+"-"+u] = 20 + 10*i + j + 1
		}
	}
	return m
}
