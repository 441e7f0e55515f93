package norm

import "testing"

// TestHash: texts hash alike exactly when they normalise alike.
func TestHash(t *testing.T) {
	texts := []string{
		"User lives in Lisbon.", "user  lives in lisbon", "User lives in Lisbon!!", " User, lives — in LISBON ",
		"User lives in Lisboa.", "User livesin Lisbon.", "Zürich café", "ZÜRICH CAFÉ.", "", "...", "a b", "ab",
		"Route 66", "route 6 6", "route66", "ROUTE 66!", "naïve—Ωmega", "NAÏVE Ωmega", "bad \xff byte", "bad \ufffd byte",
	}
	for _, a := range texts {
		for _, b := range texts {
			if same := Normalize(a) == Normalize(b); (Hash(a) == Hash(b)) != same {
				t.Errorf("%q and %q: normalised alike %v, hashed alike %v", a, b, same, !same)
			}
		}
	}
	for in, want := range map[string]string{
		" User, lives — in LISBON ": "user lives in lisbon",
		"Zürich CAFÉ!":              "zürich café",
		"naïve—ΩMEGA\tRoute 66":     "naïve ωmega route 66",
		"bad \xff byte":             "bad byte",
		"...":                       "",
	} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}
