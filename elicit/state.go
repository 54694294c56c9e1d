package elicit

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Ask keeps the answers given earlier in a call, and the invalid answers
// counted per question, in the request state of the result that asks. The
// client echoes it, so it is sealed (AES-256-GCM, standard library), bound
// to the tool it was made for and to a deadline: a client can read none of
// it, and can neither reset the count nor forge an earlier answer. A state
// that cannot be opened is refused with one of the errors below, and the
// questions are asked afresh.
var (
	// ErrStateTampered: the state is not one this server sealed with its
	// key, or it was changed (or the server's key changed: another
	// process without the same Options.StateKey, or a restart without one).
	ErrStateTampered = errors.New("kindkit: the request state was not sealed by this server or was changed")
	// ErrStateExpired: the state's deadline (Options.StateTTL) passed.
	ErrStateExpired = errors.New("kindkit: the request state has expired")
	// ErrStateForeign: the state was made for another tool.
	ErrStateForeign = errors.New("kindkit: the request state belongs to another tool")
)

// DefaultStateTTL is how long a request state holds when Options leaves
// StateTTL 0: as long as kindkit's cards wait for an answer by default.
const DefaultStateTTL = 24 * time.Hour

// stateVersion starts every sealed state, so that a format to come is told
// from this one.
const stateVersion = "k1."

// state is what Ask keeps in a result's request state: the answers given
// earlier in the call, the invalid answers counted per question, the tool
// it was made for and its deadline.
type state struct {
	Answers  map[string]*mcp.ElicitResult `json:"answers,omitempty"`
	Attempts map[string]int               `json:"attempts,omitempty"`
	Tool     string                       `json:"tool"`
	Expires  int64                        `json:"expires"` // Unix seconds
}

// sealer seals and opens request states with one key.
type sealer struct{ aead cipher.AEAD }

// processKey is the key of a server that set no Options.StateKey: random,
// and this process's alone.
var processKey = sync.OnceValue(func() []byte {
	key := make([]byte, 32)
	rand.Read(key) // never fails (crypto/rand)
	return key
})

// newSealer is a sealer with key, 32 bytes (AES-256); nil is processKey.
func newSealer(key []byte) (*sealer, error) {
	if key == nil {
		key = processKey()
	}
	if len(key) != 32 {
		return nil, fmt.Errorf("elicit: Options.StateKey is %d bytes, want 32", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &sealer{aead}, nil
}

// seal encrypts st (which names its tool inside) as text for the request
// state.
func (s *sealer) seal(st state) (string, error) {
	plain, err := json.Marshal(st)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(plain)+s.aead.Overhead())
	rand.Read(nonce) // never fails (crypto/rand)
	sealed := s.aead.Seal(nonce, nonce, plain, []byte(stateVersion))
	return stateVersion + base64.RawURLEncoding.EncodeToString(sealed), nil
}

// open reads a state that seal made, for tool, at now.
func (s *sealer) open(text, tool string, now time.Time) (state, error) {
	b64, ok := strings.CutPrefix(text, stateVersion)
	if !ok {
		return state{}, ErrStateTampered
	}
	sealed, err := base64.RawURLEncoding.Strict().DecodeString(b64)
	if err != nil || len(sealed) < s.aead.NonceSize() {
		return state{}, ErrStateTampered
	}
	nonce, box := sealed[:s.aead.NonceSize()], sealed[s.aead.NonceSize():]
	plain, err := s.aead.Open(nil, nonce, box, []byte(stateVersion))
	if err != nil {
		return state{}, ErrStateTampered
	}
	var st state
	switch {
	case json.Unmarshal(plain, &st) != nil:
		return state{}, ErrStateTampered // sealed here, so never: but not trusted either
	case st.Tool != tool:
		return state{}, ErrStateForeign
	case now.Unix() >= st.Expires:
		return state{}, ErrStateExpired
	}
	return st, nil
}
