package webhook

import (
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
)

func TestParseKeys(t *testing.T) {
	b64 := func(n int) string { return base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", n))) }
	full := ed25519.NewKeyFromSeed(seed)
	bad := append(ed25519.PrivateKey(nil), full...)
	bad[63] ^= 1
	for _, tc := range []struct {
		in   string
		keys int
		want string // an error's text; "" for none
	}{
		{secretA, 1, ""},
		{"  " + secretA + "\t" + secretB + "\n" + signing + " ", 3, ""},
		{"whsk_" + base64.StdEncoding.EncodeToString(full), 1, ""},
		{"", 0, "no key"},
		{"   ", 0, "no key"},
		{"sekret", 0, "key 1 of 1: want whsec_<base64>"},
		{secretA + " whsec_" + b64(23), 0, "key 2 of 2: whsec_…: a secret of 23 bytes; want 24 to 64"},
		{"whsec_" + b64(65), 0, "a secret of 65 bytes"},
		{"whsec_" + b64(64), 1, ""},
		{"whsec_!!!notbase64", 0, "whsec_…: not standard base64"},
		{"whsk_" + b64(31), 0, "whsk_…: 31 bytes; want an Ed25519 seed (32) or private key (64)"},
		{"whsk_" + base64.StdEncoding.EncodeToString(bad), 0, "not the public key of its seed"},
		{"whpk_" + base64.StdEncoding.EncodeToString(full.Public().(ed25519.PublicKey)), 0, "whpk_ public key verifies"},
	} {
		keys, err := ParseKeys(tc.in)
		switch {
		case tc.want == "" && (err != nil || len(keys) != tc.keys):
			t.Errorf("ParseKeys(%.20q) = %d keys, %v; want %d", tc.in, len(keys), err, tc.keys)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("ParseKeys(%.20q) = %v; want an error with %q", tc.in, err, tc.want)
		}
	}
	keys := testKeys(t)
	if got := fmt.Sprint(keys); strings.Contains(got, secretA[6:]) || strings.Contains(got, signing[5:]) {
		t.Errorf("keys print as %s", got)
	}
	if keys[0].PublicKey() != "" || keys[2].PublicKey() != "whpk_"+base64.StdEncoding.EncodeToString(ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)) {
		t.Errorf("public keys %q, %q", keys[0].PublicKey(), keys[2].PublicKey())
	}
}

// FuzzParseKeys: any input parses or gets an error, never a panic; an
// error never holds the input's key material; a key that parses signs.
func FuzzParseKeys(f *testing.F) {
	f.Add(secretA)
	f.Add(secretA + " " + signing)
	f.Add("whsk_" + base64.StdEncoding.EncodeToString(ed25519.NewKeyFromSeed(seed)))
	f.Add("whpk_AAAA")
	f.Add("whsec_")
	f.Add("whsec_====")
	f.Fuzz(func(t *testing.T, s string) {
		keys, err := ParseKeys(s)
		if err != nil {
			for _, field := range strings.Fields(s) {
				_, material, ok := strings.Cut(field, "_")
				if ok && len(material) >= 8 && strings.Contains(err.Error(), material) {
					t.Fatalf("the error %q holds the key material %q", err, material)
				}
			}
			return
		}
		if len(keys) == 0 {
			t.Fatal("no error and no key")
		}
		sig := signature(keys, "msg_1", "1700000000", []byte(`{}`))
		if n := len(strings.Fields(sig)); n != len(keys) {
			t.Fatalf("%d signatures for %d keys", n, len(keys))
		}
	})
}
