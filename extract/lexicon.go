package extract

import (
	"regexp"
	"sort"
	"strings"
)

// Word lists the rules read statements with. They name kinds of things
// (diets, jobs, devices), not particular statements.

// diets are the diets and dietary conditions "I'm ..." states.
const diets = `vegetarian|vegan|pescatarian|pescetarian|flexitarian|celiac|coeliac|diabetic|lactose[- ]intolerant|gluten[- ]free|dairy[- ]free|keto|paleo|kosher|halal|plant[- ]based|carnivore|low[- ]carb|raw vegan|fruitarian|teetotal|teetotaler|sober`

// professions are jobs "I'm a ..." states without saying where.
const professions = `nurse|doctor|physician|surgeon|dentist|pharmacist|paramedic|midwife|therapist|psychologist|psychiatrist|vet|veterinarian|teacher|professor|lecturer|tutor|researcher|scientist|engineer|developer|programmer|designer|architect|lawyer|attorney|solicitor|judge|accountant|auditor|banker|analyst|consultant|manager|director|executive|entrepreneur|founder|chef|cook|baker|butcher|barista|bartender|waiter|waitress|cashier|clerk|receptionist|secretary|assistant|librarian|journalist|writer|author|editor|translator|photographer|artist|painter|musician|singer|actor|actress|dancer|filmmaker|electrician|plumber|carpenter|mechanic|technician|builder|farmer|gardener|driver|pilot|firefighter|police officer|officer|soldier|sailor|nanny|caregiver|social worker|student|intern|freelancer|contractor|salesperson|marketer|recruiter|real estate agent|data scientist|software engineer|web developer|graphic designer|project manager|product manager|civil servant|postman|mail carrier|stay-at-home (?:mom|mum|dad|parent)|homemaker|retiree|pastor|priest|coach|trainer|personal trainer|instructor|stylist|hairdresser|beautician`

// devices name phones, computers and cars by brand or model: "I switched
// to an iPhone 15" supersedes "I have a Pixel 7" because both are phones.
var deviceClasses = []struct {
	class string
	re    *regexp.Regexp
}{
	{"phone", regexp.MustCompile(`(?i)\b(?:iphone|pixel|galaxy s|galaxy z|galaxy note|galaxy a|oneplus|xiaomi|redmi|huawei|motorola|moto g|nokia|fairphone|tecno|infinix|oppo|vivo\s+[a-z]\d|realme|android|smartphone|phone)`)},
	{"tablet", regexp.MustCompile(`(?i)\b(?:ipad|galaxy tab|tablet|kindle|e-reader)`)},
	{"laptop", regexp.MustCompile(`(?i)\b(?:macbook|thinkpad|chromebook|xps|surface laptop|surface pro|zenbook|laptop|notebook computer|inspiron|ideapad|vivobook|hp\b|dell\b|lenovo\b|asus\b|acer\b)`)},
	{"computer", regexp.MustCompile(`(?i)\b(?:imac|mac mini|mac studio|desktop|gaming pc|pc)\b`)},
	{"watch", regexp.MustCompile(`(?i)\b(?:apple watch|smartwatch|fitbit|garmin)`)},
	{"car", regexp.MustCompile(`(?i)\b(?:tesla|prius|volkswagen|vw|golf|toyota|honda|civic|corolla|bmw|audi|mercedes|ford|fiat|renault|peugeot|skoda|hyundai|kia|nissan|mazda|volvo|subaru|jeep|seat|ibiza|leon|opel|corsa|astra|citroën|citroen|dacia|sandero|cupra|polo|clio|yaris|mini cooper|fiesta|focus|uno|gol|kia|niro|car|motorbike|motorcycle|scooter|auto|coche|carro|voiture|wagen)\b`)},
	{"samsung", regexp.MustCompile(`(?i)\bsamsung\b`)}, // a phone unless said otherwise
}

// deviceClass is the kind of device an object names ("" for none).
func deviceClass(o string) string {
	for _, d := range deviceClasses {
		if d.re.MatchString(o) {
			if d.class == "samsung" {
				return "phone"
			}
			return d.class
		}
	}
	return ""
}

// notNames are capitalised words that follow "I'm" without being a name:
// nationalities, faiths, and words written with a capital at the start of
// a sentence.
var notNames = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`American British English Irish Scottish Welsh Canadian Australian Mexican Brazilian
	Argentinian Argentine Chilean Colombian Peruvian Venezuelan Cuban Spanish Portuguese French German Dutch Belgian Swiss
	Austrian Italian Greek Turkish Polish Czech Slovak Hungarian Romanian Bulgarian Serbian Croatian Slovenian Ukrainian
	Russian Swedish Norwegian Danish Finnish Icelandic Estonian Latvian Lithuanian Chinese Japanese Korean Vietnamese Thai
	Filipino Indonesian Malaysian Indian Pakistani Bangladeshi Nepali Iranian Persian Iraqi Israeli Lebanese Syrian
	Egyptian Moroccan Algerian Tunisian Nigerian Kenyan Ghanaian Ethiopian African European Asian Latino Latina Hispanic
	Arab Kiwi Catholic Protestant Christian Muslim Jewish Hindu Buddhist Sikh Mormon Atheist Agnostic Orthodox Lutheran
	Baptist Methodist Pagan Vegan Vegetarian Gay Lesbian Bi Trans Married Single Sorry Fine Good Okay Ok Here Back Home
	Ready Done Happy Sad Tired Sure Not Just So Very Really Also Still Always Never Currently Now Going Trying Looking
	Thinking Planning Working Learning Doing Getting Feeling Glad Excited Afraid Allergic Retired Pregnant Interested
	Mein Meine Meinen Meiner Meinem Unser Unsere Unseren Unserer Unserem Mon Ma Mes Notre Mi Mis Nuestro Nuestra Meu Minha Nosso Nossa
	Deutsche Deutscher Österreicher Österreicherin Schweizer Schweizerin Staatsbürger Staatsbürgerin Freie Freier Selbstständig
	Ich Er Sie Wir Es Du Yo Je Il Elle Eu Ele Ela Same Ditto Life Nothing Everything Everyone Everybody Nobody Weather Hi Hey Hello Thanks Greetings Howdy Howzit Evening Morning Afternoon Night Mate Guys Folks`) {
		notNames[w] = true
	}
}

// adverbs may stand between "I" and its verb ("I strongly dislike").
const adverbs = `(?:(?:[a-z]+ly|much|always|also|just|still|often|never|seldom|quite|rather|kind of|sort of|do|tend to|try to|prefer to|always try to|will|would|'ll|exclusively)\s+)*`

// adverbWord reports whether w is an adverb that may stand between a
// subject and its verb, so the verb after it is the one to conjugate.
func adverbWord(w string) bool {
	w = strings.ToLower(w)
	switch w {
	case "really", "strongly", "absolutely", "much", "generally", "usually", "normally", "typically", "always",
		"also", "just", "definitely", "completely", "strictly", "firmly", "totally", "truly", "deeply", "genuinely",
		"greatly", "highly", "particularly", "especially", "actually", "honestly", "personally", "mostly", "simply",
		"still", "often", "rarely", "seldom", "never", "only", "even", "mainly", "largely", "certainly", "fully",
		"entirely", "extremely", "quite", "now", "sometimes", "occasionally":
		return true
	}
	return len(w) > 4 && strings.HasSuffix(w, "ly") && !lyVerbs[w]
}

// coordinatedVerbs are verbs that, after "and", "but" or "or" in a
// statement about the user, share its subject: "I avoid X and prefer Y".
var coordinatedVerbs = map[string]bool{
	"prefer": true, "avoid": true, "like": true, "love": true, "enjoy": true, "dislike": true, "hate": true,
	"find": true, "refuse": true, "need": true, "want": true, "use": true, "buy": true, "wear": true, "eat": true,
	"drink": true, "watch": true, "play": true, "support": true, "choose": true, "opt": true, "go": true, "stick": true,
	"try": true, "stay": true, "feel": true, "get": true, "look": true, "value": true, "appreciate": true, "favor": true,
	"favour": true, "seek": true, "believe": true, "rely": true, "consider": true, "shop": true, "book": true, "travel": true,
	"fly": true, "take": true, "do": true, "have": true, "work": true, "live": true, "own": true, "keep": true, "follow": true,
	"make": true, "read": true, "listen": true, "cook": true, "detest": true, "despise": true, "loathe": true, "adore": true,
	"steer": true, "lean": true, "gravitate": true, "insist": true, "ride": true, "drive": true, "walk": true, "cycle": true,
	"stream": true, "learn": true, "study": true, "exercise": true, "train": true, "run": true, "swim": true, "hike": true,
}

// foodWords name what a diet keeps or leaves out: "I no longer eat meat"
// changes the user's diet, "I no longer eat out" does not.
var (
	foodWords = []string{"meat", "fish", "seafood", "dairy", "eggs", "pork", "beef", "chicken", "animal products", "gluten", "sugar", "carbs"}
	foodWord  = regexp.MustCompile(`(?i)\b(?:` + strings.Join(foodWords, "|") + `)\b`)
)

// noLonger is what a retraction of a job or an employer says: "I'm not a
// nurse anymore", "I no longer work at Acme".
var noLonger = []string{"no longer", "anymore", "any more"}

// activities are the pastimes and habits a user takes up and gives up
// ("quit the gym", "took up bouldering"), in English.
const activities = `(?:gym|running|jogging|yoga|hot\s+yoga|pilates|crossfit|swimming|cycling|spin(?:ning)?|football|soccer|tennis|squash|padel|climbing|bouldering|boxing|kickboxing|golf|basketball|volleyball|rugby|hockey|netball|cricket|dancing|salsa|ballet|piano|guitar|violin|drums|chess|knitting|painting|photography|smoking|vaping|drinking|alcohol|coffee|caffeine|sugar|weights|lifting|powerlifting|marathons?|triathlons?|parkrun|hiking|surfing|skating|skiing|snowboarding|gaming|martial\s+arts|karate|judo|jiu[- ]jitsu|meditation|journaling|baking|gardening|fishing|archery|rowing|badminton|table\s+tennis|pickleball)`

// compoundHeads end the German compounds a table's word starts
// ("Nussallergie", "Laktoseintoleranz").
var compoundHeads = []string{"allergie", "intoleranz", "unverträglichkeit"}

// instruments are the instruments people play or learn, in the five
// languages, to their English names.
var instruments = words(`guitar:guitar piano:piano violin:violin cello:cello drums:drums ukulele:ukulele bass:bass
	saxophone:saxophone sax:saxophone flute:flute trumpet:trumpet trombone:trombone clarinet:clarinet harp:harp
	keyboard:keyboard banjo:banjo mandolin:mandolin accordion:accordion oboe:oboe viola:viola harmonica:harmonica
	guitarra:guitar violín:violin violonchelo:cello batería:drums bajo:bass saxofón:saxophone flauta:flute trompeta:trumpet
	gitarre:guitar klavier:piano geige:violin cello:cello schlagzeug:drums posaune:trombone trompete:trumpet flöte:flute
	querflöte:flute saxophon:saxophone klarinette:clarinet akkordeon:accordion
	guitare:guitar violon:violin violoncelle:cello batterie:drums trompette:trumpet flûte:flute saxophone:saxophone
	violão:guitar violino:violin bateria:drums baixo:bass cavaquinho:cavaquinho sanfona:accordion teclado:keyboard`)

// instrumentPat is the instruments as a pattern's alternatives.
var instrumentPat = func() string {
	var ws []string
	for w := range instruments {
		ws = append(ws, regexp.QuoteMeta(w))
	}
	sort.Slice(ws, func(i, j int) bool { return len(ws[i]) > len(ws[j]) })
	return "(?:" + strings.Join(ws, "|") + ")"
}()
