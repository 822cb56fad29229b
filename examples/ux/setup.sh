#!/bin/sh
# Creates the UX example's throwaway repository, repos/web, from scratch: a
# git repository on branch main with a tiny static site (index.html) and
# its server (server.js: node's http module, no package), and a test
# script. Safe to run again: it removes the old one first.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$here/.cadence" "$here"/*.state.json "$here"/*.state.json.journal "$here"/*.state.json.lock
rm -rf "$here/repos/web"
mkdir -p "$here/repos/web"
cd "$here/repos/web"
git init -q -b main .
git config user.name "cadence ux example"
git config user.email "ux@cadence.invalid"
cat > server.js <<'JS'
// Serves this folder's index.html (and nothing else) on 127.0.0.1:$PORT.
const http = require("http");
const fs = require("fs");
const path = require("path");
const port = Number(process.env.PORT || 8080);
http.createServer((req, res) => {
  const page = req.url === "/" ? "index.html" : req.url.slice(1);
  if (!/^[a-z-]+\.html$/.test(page)) { res.writeHead(404); res.end("not found\n"); return; }
  fs.readFile(path.join(__dirname, page), (err, body) => {
    if (err) { res.writeHead(404); res.end("not found\n"); return; }
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end(body);
  });
}).listen(port, "127.0.0.1", () => console.log("listening on http://127.0.0.1:" + port + "/"));
JS
cat > index.html <<'HTML'
<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Greeter</title></head>
<body><h1>Greeter</h1><p>Hello.</p></body></html>
HTML
printf '#!/bin/sh\n# The test gate: the page has a title.\ngrep -q "<h1>" index.html\n' > test.sh
git add server.js index.html test.sh
git commit -qm "initial commit"
echo "created $here/repos/web"
