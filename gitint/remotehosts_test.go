package gitint

import (
	"context"
	"slices"
	"testing"
)

func TestRemoteHost(t *testing.T) {
	for _, c := range []struct {
		url, host string
	}{
		{"https://github.com/x/y.git", "github.com"},
		{"https://user:tok@GitHub.com:8443/x/y", "github.com"},
		{"http://10.1.2.3:8080/r.git", "10.1.2.3"},
		{"ssh://git@gitlab.example.org:2222/x/y.git", "gitlab.example.org"},
		{"ssh://host.example/x", "host.example"},
		{"git+ssh://git@h.example/x", "h.example"},
		{"git://git.kernel.org/pub/x.git", "git.kernel.org"},
		{"git@github.com:x/y.git", "github.com"},
		{"github.com:x/y.git", "github.com"},
		{"github.com.:x", "github.com"},
		{"persistent-https::https://go.example/x", "go.example"},
		{"https://github.com", "github.com"},
		// No host: local, an IPv6 literal, a cadence guard URL.
		{"/srv/git/x.git", ""},
		{"./x.git", ""},
		{"../a:b", ""},
		{"file:///srv/git/x.git", ""},
		{"FILE:///srv/git/x.git", ""},
		{"https://[::1]:8080/x", "[::1]"},
		{"ssh://git@[2001:DB8::1]/x", "[2001:db8::1]"},
		{"https://[::ffff:10.0.0.1]/x", "10.0.0.1"},
		{"cadence-no-push::origin", ""},
		{"cadence-no-push::/srv/x.git", ""},
		{"", ""},
	} {
		h, ok := RemoteHost(c.url)
		if h != c.host || ok != (c.host != "") {
			t.Errorf("RemoteHost(%q) = %q, %v; want %q", c.url, h, ok, c.host)
		}
	}
}

func TestHostsOfConfig(t *testing.T) {
	cfg := "remote.origin.url\ngh:x/y\x00" +
		"remote.origin.pushurl\ngit@push.example:x/y\x00" +
		"remote.local.url\n/srv/x.git\x00" +
		"url.https://github.com/.insteadof\ngh:\x00" +
		"url.https://g.example/.insteadof\ngh:x\x00" + // a longer prefix wins
		"url.https://short.example/.insteadof\ng\x00" + // loses to gh:x
		"url.ssh://git@mirror.example/.pushinsteadof\ngh:\x00" +
		"url.cadence-no-push::.pushinsteadof\n\x00"
	got := hostsOfConfig(cfg)
	slices.Sort(got)
	got = slices.Compact(got)
	want := []string{"g.example", "mirror.example", "short.example"}
	if !slices.Equal(got, want) {
		t.Errorf("hosts = %q, want %q", got, want)
	}
}

func TestRemoteHostsRepo(t *testing.T) {
	ctx := context.Background()
	repo := t.TempDir()
	for _, args := range [][]string{
		{"init", "-q"},
		{"remote", "add", "origin", "https://github.com/x/y.git"},
		{"remote", "add", "up", "git@GitLab.example:z/w.git"},
		{"remote", "add", "near", "/srv/near.git"},
		{"config", "remote.origin.pushurl", "ssh://git@github.com/x/y.git"},
	} {
		if _, err := tgit().Run(ctx, repo, args...); err != nil {
			t.Fatal(err)
		}
	}
	empty := t.TempDir()
	if _, err := tgit().Run(ctx, empty, "init", "-q"); err != nil {
		t.Fatal(err)
	}
	got := tgit().RemoteHosts(ctx, []string{repo, empty, repo})
	if want := []string{"github.com", "gitlab.example"}; !slices.Equal(got, want) {
		t.Errorf("RemoteHosts = %q, want %q", got, want)
	}
}
