package index

import "strings"

// A question often needs a standing fact it shares no word with: "suggest
// a lip balm" needs "avoids animal-derived beauty products", "plan my
// trip to Rome" needs "refuses to fly". The bridge is a small table of the
// domains of everyday life, each a list of the words that name things in
// it; a question and a fact that fall in one domain are related. It only
// ever adds a fact to what the words found, never ranks one lower.

// domains are the domains of everyday life and their words.
var domains = [][]string{
	// food and drink, cooking, diets, restaurants
	strings.Fields(`food foods eat eating meal meals dish dishes cuisine cook cooking recipe recipes dinner lunch breakfast
	snack snacks restaurant restaurants menu cafe bakery dessert desserts ingredient ingredients diet diets vegan vegetarian
	pescatarian keto gluten dairy lactose meat fish seafood shellfish nuts peanut peanuts allergy allergic protein sugar
	salad soup pasta pizza sushi spicy grocery groceries kitchen baking bake chef drink drinks coffee tea wine beer alcohol
	cocktail juice nutrition nutritious supplement supplements fruit vegetables organic halal kosher tasting flavor flavors
	sweet savory fried grill barbecue brunch catering`),
	// health, body, medicine
	strings.Fields(`health healthy doctor medical medicine medication symptoms pain sleep stress anxiety allergy allergies
	allergic condition diabetes asthma skin sensitive injury knee knees back joint joints therapy therapist vaccine
	vaccination hospital clinic illness sick disease mental wellbeing wellness`),
	// fitness, exercise, sports
	strings.Fields(`fitness exercise exercises workout workouts training gym run running jog jogging cardio strength yoga
	pilates swim swimming cycling bike sport sports team athlete marathon hiking hike endurance stretching muscle
	muscles weights tennis football soccer basketball golf climbing martial boxing dance dancing class classes coach
	tournament game match`),
	// travel, transport, flights
	strings.Fields(`travel traveling travelling trip trips vacation holiday holidays journey visit visiting tour tourist
	sightseeing flight flights fly flying airline airlines airport plane train trains rail bus buses subway metro taxi uber
	lyft car cars rental rent drive driving road ferry cruise boat ship transport transportation commute commuting getting
	around abroad destination itinerary passport luggage`),
	// lodging
	strings.Fields(`hotel hotels stay staying accommodation accommodations hostel resort resorts airbnb room rooms booking
	book lodging inn motel suite`),
	// pets and animals
	strings.Fields(`pet pets dog dogs puppy cat cats kitten bird birds fish reptile reptiles snake snakes hamster rabbit
	horse animal animals vet veterinarian breed breeder breeders shelter adopt adoption leash litter aquarium feed feeding
	grooming`),
	// clothing and fashion
	strings.Fields(`clothing clothes outfit outfits wear wearing fashion style stylish dress dresses shirt shirts jacket
	jackets coat coats shoes boots sneakers heels jeans pants trousers sweater wardrobe bag bags handbag handbags
	accessories jewelry leather wool silk cotton fabric fabrics brand brands designer suit tie hat scarf sustainable`),
	// beauty and personal care
	strings.Fields(`beauty skincare skin makeup cosmetic cosmetics lipstick lip balm moisturizer cream serum serums cleanser
	shampoo conditioner hair haircut perfume perfumes fragrance fragrances scent nail nails lotion sunscreen mascara
	foundation products product routine spa grooming`),
	// technology and devices
	strings.Fields(`technology tech device devices gadget gadgets phone phones smartphone smartphones laptop laptops computer
	computers tablet tablets app apps software hardware headphones speaker speakers camera cameras tv television smart
	screen screens keyboard mouse printer router wifi internet online cloud storage subscription subscriptions android
	iphone apple samsung google windows linux mac console wearable wearables watch smartwatch electronics`),
	// games
	strings.Fields(`game games gaming gamer play playing videogame videogames console puzzle puzzles board rpg multiplayer
	shooter strategy adventure esports player players`),
	// films, shows, streaming
	strings.Fields(`movie movies film films show shows series episode episodes season seasons tv television watch watching
	stream streaming netflix documentary documentaries cinema theater theatre comedy drama thriller horror animation
	anime actor actress`),
	// music, books, arts
	strings.Fields(`music song songs album albums band bands concert concerts playlist listen listening podcast podcasts book
	books read reading novel novels author authors library poetry art arts museum museums gallery galleries painting
	exhibition festival festivals instrument guitar piano`),
	// learning and education
	strings.Fields(`learn learning study studying studies course courses class classes lesson lessons school university
	college degree exam exams teacher tutor tutoring education educational homework lecture lectures skill skills
	training textbook textbooks student students language languages`),
	// home and household
	strings.Fields(`home house apartment flat furniture decor decoration garden gardening kitchen bedroom living room sofa
	bed cleaning chores appliance appliances renovation rent neighborhood neighbourhood move moving`),
	// work and money
	strings.Fields(`work job jobs career office colleague colleagues boss meeting meetings project projects salary money budget
	finance finances savings invest investing investment bank business company interview resume shift shifts`),
	// outdoors, nature, weather
	strings.Fields(`outdoor outdoors nature park parks beach beaches mountain mountains camping camp lake river forest weather
	sun sunny rain snow hot cold heat summer winter spring autumn fall`),
	// social life, events, family
	strings.Fields(`party parties event events wedding birthday gift gifts friends friend family kids children partner date
	dating romantic anniversary celebration celebrate social crowd crowds crowded nightlife bar bars club clubs`),
}

// bridge maps each analysed term to the domains it falls in (a bit each).
type bridge map[string]uint32

// Domains returns the domains text falls in, one bit a domain.
func (x *Index) Domains(text string) uint32 {
	x.bridgeOnce.Do(func() {
		x.bridge = bridge{}
		a := x.mapping.AnalyzerNamed(contentAnalyzer)
		for d, words := range domains {
			for _, w := range words {
				for _, tok := range a.Analyze([]byte(w)) {
					x.bridge[string(tok.Term)] |= 1 << d
				}
			}
		}
	})
	a := x.mapping.AnalyzerNamed(contentAnalyzer)
	if a == nil {
		return 0
	}
	var in uint32
	for _, tok := range a.Analyze([]byte(text)) {
		in |= x.bridge[string(tok.Term)]
	}
	return in
}
