package gitint

import (
	"context"
	"net"
	"regexp"
	"slices"
	"strings"
)

// RemoteHosts returns the network hosts of the repositories' remotes (at
// the paths repos), lower case, sorted, each once: the host of every
// remote's url and pushurl, and of what git's url.<base>.insteadOf and
// pushInsteadOf rewrites make of them (the longest matching prefix, as git
// does; the URL as written only when no rule applies). Local remotes (paths, file:// URLs) have no host. A repository
// whose config cannot be read adds nothing. One git call per repository.
//
// The claude adapter denies these hosts to sandboxed commands, so that a
// push over the network is refused before any connection.
func (g Git) RemoteHosts(ctx context.Context, repos []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, repo := range repos {
		cfg, err := g.Run(ctx, repo, "config", "-z", "--get-regexp",
			`^(remote\..*\.(url|pushurl)|url\..*\.(insteadof|pushinsteadof))$`)
		if err != nil {
			continue
		}
		for _, h := range hostsOfConfig(cfg) {
			if !seen[h] {
				seen[h] = true
				out = append(out, h)
			}
		}
	}
	slices.Sort(out)
	return out
}

// hostsOfConfig returns the remote hosts named by the output of
// `git config -z --get-regexp` over remotes' url/pushurl and url.*
// rewrites (RemoteHosts), in the order found, possibly twice.
func hostsOfConfig(cfg string) []string {
	var urls []string
	rewrites := map[string][][2]string{} // insteadof|pushinsteadof -> (prefix, base)
	for _, e := range strings.Split(cfg, "\x00") {
		k, v, ok := strings.Cut(e, "\n")
		if !ok || v == "" || strings.ContainsAny(v, "\n\r") {
			continue
		}
		if rest, ok := strings.CutPrefix(k, "url."); ok {
			i := strings.LastIndexByte(rest, '.')
			if i < 0 {
				continue
			}
			rewrites[rest[i+1:]] = append(rewrites[rest[i+1:]], [2]string{v, rest[:i]})
			continue
		}
		urls = append(urls, v)
	}
	var out []string
	for _, u := range urls {
		// A fetch goes to the insteadOf form, a push to the pushInsteadOf
		// one when a rule matches (else to the fetch's): u itself only when
		// no rule matches.
		fetch := rewrite(u, rewrites["insteadof"])
		push := rewrite(u, rewrites["pushinsteadof"])
		if push == u {
			push = fetch
		}
		for _, v := range []string{fetch, push} {
			if h, ok := RemoteHost(v); ok {
				out = append(out, h)
			}
		}
	}
	return out
}

// rewrite applies the rule of rules (prefix, base) with the longest prefix
// of u, as git's insteadOf does; u itself when none matches.
func rewrite(u string, rules [][2]string) string {
	best := -1
	for i, r := range rules {
		if strings.HasPrefix(u, r[0]) && (best < 0 || len(r[0]) > len(rules[best][0])) {
			best = i
		}
	}
	if best < 0 {
		return u
	}
	return rules[best][1] + u[len(rules[best][0]):]
}

// hostName is what RemoteHost returns but IPv6 literals: a DNS name or an
// IPv4 address.
var hostName = regexp.MustCompile(`^[a-z0-9_]([a-z0-9_.-]*[a-z0-9_])?$`)

// RemoteHost returns the network host of a git remote URL, lower case,
// without user or port (an IPv6 literal in brackets, from a scheme:// URL),
// and ok false when u names a local repository or its host is not a name
// or an address. The
// forms are git's (git-fetch(1) "GIT URLS"):
//
//	scheme://[user@]host[:port]/path   (ssh, git, http, https, ftp, …; not file://)
//	[user@]host:path                   (scp-like: no slash before the colon)
//	<transport>::<address>             (a remote helper: the host of <address>)
//	/path, ./path, file:///path        (local: no host)
func RemoteHost(u string) (string, bool) {
	if i := strings.Index(u, "::"); i > 0 && !strings.ContainsAny(u[:i], "/:@[") {
		return RemoteHost(u[i+2:])
	}
	var host string
	if scheme, rest, ok := strings.Cut(u, "://"); ok {
		if strings.EqualFold(scheme, "file") {
			return "", false
		}
		auth, _, _ := strings.Cut(rest, "/")
		if i := strings.LastIndexByte(auth, '@'); i >= 0 {
			auth = auth[i+1:]
		}
		host = auth
		if h, _, err := net.SplitHostPort(auth); err == nil {
			host = h
		}
		if ip := net.ParseIP(strings.Trim(host, "[]")); ip != nil {
			if ip.To4() == nil {
				return "[" + ip.String() + "]", true
			}
			host = ip.To4().String()
		}
	} else {
		colon, slash := strings.IndexByte(u, ':'), strings.IndexByte(u, '/')
		if colon < 0 || (slash >= 0 && slash < colon) {
			return "", false // a local path
		}
		host = u[:colon]
		if i := strings.LastIndexByte(host, '@'); i >= 0 {
			host = host[i+1:]
		}
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if !hostName.MatchString(host) {
		return "", false
	}
	return host, true
}
