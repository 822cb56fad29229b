package engine

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// User is one client the engine accepts when Options.Users is set: an
// nkey user (its public key, "U…") and the subjects it may publish to and
// subscribe to (nats-server's permissions, allow lists only; no other
// subject is allowed).
type User struct {
	// Name says who it is in errors ("lead", "worker of queue team").
	Name      string
	NKey      string
	Publish   []string
	Subscribe []string
}

// InboxPrefix is the inbox prefix of the client with nkey pub: a client
// that connects with a seed file (ClientOptions) takes its replies there,
// so that its subscribe permission can be its own inbox only and it reads
// no other client's replies.
func InboxPrefix(pub string) string { return "_INBOX_" + pub }

// SeedFile reads the nkey user seed file at path, or creates it (mode
// 0600, in a folder created 0700) with a new user key when it does not
// exist, and returns the user's public key. Errors: a file that holds no
// user seed, or that others than its owner can read.
func SeedFile(path string) (string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		kp, err := nkeys.CreateUser()
		if err != nil {
			return "", fmt.Errorf("engine: new user key: %w", err)
		}
		seed, err := kp.Seed()
		if err != nil {
			return "", fmt.Errorf("engine: new user key: %w", err)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return "", fmt.Errorf("engine: %w", err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return "", fmt.Errorf("engine: %w", err)
		}
		_, werr := f.Write(append(seed, '\n'))
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return "", fmt.Errorf("engine: %s: %w", path, werr)
		}
		return kp.PublicKey()
	}
	if err != nil {
		return "", fmt.Errorf("engine: %w", err)
	}
	return seedPublic(path, data)
}

// seedPublic checks the content of seed file path and returns its public
// key.
func seedPublic(path string, data []byte) (string, error) {
	if st, err := os.Stat(path); err == nil && st.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("engine: %s: a seed file readable by others (mode %v): chmod 600 it", path, st.Mode().Perm())
	}
	kp, err := nkeys.ParseDecoratedNKey(data)
	if err != nil {
		return "", fmt.Errorf("engine: %s: not an nkey seed file: %w", path, err)
	}
	pub, err := kp.PublicKey()
	if err != nil || !nkeys.IsValidPublicUserKey(pub) {
		return "", fmt.Errorf("engine: %s: not a user nkey seed", path)
	}
	return pub, nil
}

// ClientOptions are the connection options of a client authenticating
// with the credentials file at path: a NATS credentials file (a user JWT
// and its seed, "-----BEGIN NATS USER JWT-----") as nats.UserCredentials,
// or an nkey user seed file (as SeedFile writes) as that nkey with its
// own InboxPrefix.
func ClientOptions(path string) ([]nats.Option, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	if bytes.Contains(data, []byte("BEGIN NATS USER JWT")) {
		return []nats.Option{nats.UserCredentials(path)}, nil
	}
	pub, err := seedPublic(path, data)
	if err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	opt, err := nats.NkeyOptionFromSeed(path)
	if err != nil {
		return nil, fmt.Errorf("credentials %s: %w", path, err)
	}
	return []nats.Option{opt, nats.CustomInboxPrefix(InboxPrefix(pub))}, nil
}

// nkeyUsers are users as nats-server's options.
func nkeyUsers(users []User) ([]*server.NkeyUser, error) {
	var out []*server.NkeyUser
	for _, u := range users {
		if !nkeys.IsValidPublicUserKey(u.NKey) {
			return nil, fmt.Errorf("engine: user %s: %q is not a user nkey", u.Name, u.NKey)
		}
		out = append(out, &server.NkeyUser{Nkey: u.NKey, Permissions: &server.Permissions{
			Publish: allowOnly(u.Publish), Subscribe: allowOnly(u.Subscribe),
		}})
	}
	return out, nil
}

// allowOnly allows subjects and nothing else (an empty list: nothing).
func allowOnly(subjects []string) *server.SubjectPermission {
	if len(subjects) == 0 {
		return &server.SubjectPermission{Deny: []string{">"}}
	}
	return &server.SubjectPermission{Allow: append([]string{}, subjects...)}
}

// Dial connects to the engine at url (nats://HOST:PORT or tls://HOST:PORT)
// with opts. A nats:// URL of an engine that requires TLS is refused with
// an error that says to use tls:// (the URL says the traffic is in clear,
// the engine says otherwise: the wave or the worker is misconfigured).
func Dial(url string, opts ...nats.Option) (*nats.Conn, error) {
	plain := strings.HasPrefix(url, "nats://")
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		if plain && (strings.Contains(err.Error(), "tls") || strings.Contains(err.Error(), "x509") || strings.Contains(err.Error(), "secure")) {
			return nil, fmt.Errorf("engine %s requires TLS: use tls://%s and trust its CA: %w", url, strings.TrimPrefix(url, "nats://"), err)
		}
		return nil, fmt.Errorf("engine %s: %w", url, err)
	}
	if plain && nc.TLSRequired() {
		nc.Close()
		return nil, fmt.Errorf("engine %s requires TLS: use tls://%s", url, strings.TrimPrefix(url, "nats://"))
	}
	return nc, nil
}
