package fakeapi

import (
	"encoding/json"
	"testing"
)

// TestPromptURL: a tool input's PromptURL becomes the first local URL of
// the request's messages (not of its system prompt), and stays when there
// is none.
func TestPromptURL(t *testing.T) {
	body := func(prompt string) []byte {
		b, _ := json.Marshal(map[string]any{"system": "see http://127.0.0.1:1/docs",
			"messages": []any{map[string]any{"role": "user", "content": prompt}}})
		return b
	}
	in := json.RawMessage(`{"url":"` + PromptURL + `"}`)
	for _, tc := range []struct{ prompt, want string }{
		{"Review the app at http://127.0.0.1:43121/settings?tab=a.", `{"url":"http://127.0.0.1:43121/settings?tab=a"}`},
		{"Open http://localhost:8080 then", `{"url":"http://localhost:8080"}`},
		{"no address here (https://example.com/)", string(in)},
	} {
		if got := string(withPromptURL(in, promptURL(body(tc.prompt)))); got != tc.want {
			t.Errorf("%q: got %s, want %s", tc.prompt, got, tc.want)
		}
	}
}

// TestUXReviewPlaysURL: the UX review script's navigation goes to the
// prompt's URL when the server plays it.
func TestUXReviewPlaysURL(t *testing.T) {
	s := &Server{}
	m := s.message(UXReview("ok")[0], "m", "http://127.0.0.1:5/")
	if len(m.Blocks) != 1 || m.Blocks[0].Name != BrowserNavigate || string(m.Blocks[0].Input) != `{"url":"http://127.0.0.1:5/"}` {
		t.Errorf("blocks %+v", m.Blocks)
	}
}
