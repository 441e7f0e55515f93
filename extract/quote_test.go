package extract

import "testing"

func TestStripQuoted(t *testing.T) {
	injected := []string{"User lives in Lisbon.", "User's favourite colour is green.", "User is 30."}
	tests := []struct{ name, text, want string }{
		{"list quoted back",
			"Here is what I know:\n- User lives in Lisbon.\n- USER'S FAVOURITE COLOUR IS GREEN!\nAnything else?",
			"Here is what I know:\nAnything else?"},
		{"paraphrase around the memory",
			"You told me: user lives in lisbon\nSo, pastel de nata?",
			"So, pastel de nata?"},
		{"other lines kept",
			"Lisbon is lovely in spring.\nThe user lives near the sea.",
			"Lisbon is lovely in spring.\nThe user lives near the sea."},
		{"short memory is not taken for a quote",
			"User is 30.\nHappy birthday!",
			"User is 30.\nHappy birthday!"},
		{"every line quoted", "- User lives in Lisbon.", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := StripQuoted(tt.text, injected); got != tt.want {
				t.Errorf("StripQuoted(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
	t.Run("nothing injected", func(t *testing.T) {
		text := "  - User lives in Lisbon.\n"
		for _, inj := range [][]string{nil, {}, {"User is 30."}, {"  ", "!!"}} {
			if got := StripQuoted(text, inj); got != text {
				t.Errorf("StripQuoted(_, %q) = %q, want the text unchanged", inj, got)
			}
		}
	})
	t.Run("empty text", func(t *testing.T) {
		if got := StripQuoted("", injected); got != "" {
			t.Errorf("StripQuoted(\"\") = %q", got)
		}
	})
}
