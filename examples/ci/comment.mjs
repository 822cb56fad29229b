// comment.mjs posts cadence's plan as one comment on a pull request, and
// updates that comment on every later run (never a new comment per push).
// cadence-comment.yml runs it; copy it to .github/cadence/comment.mjs.
// Node 18 or later, no dependencies (the built-in fetch).
//
// Environment:
//   GITHUB_API_URL       the REST API (default https://api.github.com)
//   GITHUB_REPOSITORY    owner/name
//   GITHUB_TOKEN         a token that may comment on the pull request
//   CADENCE_PLAN_DIR     the plan artifact: plan.md (cadence plan -format
//                        markdown; empty when no wave file was planned), pr
//                        (the pull request's number), head-sha
//   CADENCE_PR           the pull request's number (default: the pr file)
//   CADENCE_HEAD_SHA     the planned commit: the comment is posted only when
//                        the pull request's head is still this commit (an
//                        older run must not overwrite a newer plan)
//   CADENCE_RUN_URL      the plan run, linked when the plan is truncated
//   CADENCE_COMMENT_AUTHOR  the login whose comment is updated (default
//                        github-actions[bot], GITHUB_TOKEN's): a comment by
//                        anyone else that carries the marker is left alone
//   GITHUB_STEP_SUMMARY  where the plan goes when it cannot be posted
//
// Everything in the artifact is untrusted (a fork's pull request ran the
// plan). The body is made safe to post: control characters are shown as
// Unicode control pictures, bidirectional overrides replaced, @mentions and
// issue references (#123, GH-123) get a zero-width space so they notify no
// one, and the whole body stays under GitHub's 65,536-character limit
// (truncated with a note and a link to the run). When the token may not
// comment (HTTP 403 or 404: a read-only token, as a fork's pull request
// gets in a pull_request workflow), the plan goes to the job summary and the
// script exits 0: a missing permission never fails the check. Other errors
// (the API down, a malformed artifact) exit 1.

import { appendFileSync, readFileSync, existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

/** The hidden marker that finds cadence's comment among the others. */
export const MARKER = "<!-- cadence-plan -->";

/** GitHub refuses a comment body of more than LIMIT characters. */
export const LIMIT = 65536;

/**
 * BUDGET is the most UTF-8 bytes a body has: bytes are never fewer than
 * characters, however GitHub counts them, and the margin allows for line
 * endings stored as CRLF in the last lines.
 */
export const BUDGET = LIMIT - 536;

const ZWSP = "\u200b";

/**
 * neutralise returns text safe to post: C0 controls (but newline and tab)
 * and DEL as their control pictures, CR LF as LF, C1 controls and the
 * bidirectional overrides and isolates as U+FFFD, and a zero-width space
 * after the '@' of a mention and the '#' of an issue reference (not in an
 * HTML character reference such as &#8203;), and in GH-123.
 */
export function neutralise(text) {
  return text
    .replace(/\r\n/g, "\n")
    .replace(/[\x00-\x08\x0b-\x1f]/g, (c) => String.fromCharCode(0x2400 + c.charCodeAt(0)))
    .replace(/\x7f/g, "\u2421")
    .replace(/[\x80-\x9f\u202a-\u202e\u2066-\u2069]/g, "\ufffd")
    .replace(/@(?=[A-Za-z0-9_])/g, "@" + ZWSP)
    // the same characters written as HTML entities (a fork's artifact may)
    .replace(/(&#0*64;|&#x0*40;|&commat;)(?=[A-Za-z0-9_])/gi, "$1" + ZWSP)
    .replace(/(&#0*35;|&#x0*23;|&num;)(?=[0-9])/gi, "$1" + ZWSP)
    .replace(/(?<!&)#(?=[0-9])/g, "#" + ZWSP)
    .replace(/\bGH-(?=[0-9])/gi, (m) => m.slice(0, 2) + ZWSP + "-");
}

const bytes = (s) => Buffer.byteLength(s, "utf8");

/**
 * fit returns body cut to at most room UTF-8 bytes at a line end (or, for
 * one long line, at a character), with a code fence or <details> sections
 * left open at the cut closed again; whether it cut.
 */
export function fit(body, room) {
  if (bytes(body) <= room) return { text: body, cut: false };
  const reserve = 200; // the closing fence and </details> tags
  let used = 0;
  let fence = ""; // the open fence, "" outside one
  let details = 0;
  const out = [];
  for (const line of body.split("\n")) {
    const n = bytes(line) + 1;
    if (used + n > room - reserve) {
      if (out.length === 0) {
        // one line longer than the room: cut it at a character
        let part = "";
        for (const ch of line) {
          if (bytes(part) + bytes(ch) > room - reserve) break;
          part += ch;
        }
        out.push(part);
      }
      break;
    }
    out.push(line);
    used += n;
    const m = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (fence) {
      if (m && m[1][0] === fence[0] && m[1].length >= fence.length && line.trim() === m[1]) fence = "";
    } else if (m) {
      fence = m[1];
    } else {
      details += (line.match(/<details\b/gi) || []).length;
      details -= (line.match(/<\/details>/gi) || []).length;
      details = Math.max(details, 0);
    }
  }
  let text = out.join("\n");
  if (fence) text += "\n" + fence;
  text += "\n</details>".repeat(details);
  return { text, cut: true };
}

/** compose is the whole comment: marker, plan, and a note when cut. */
export function compose(plan, runURL) {
  const head = MARKER + "\n";
  const safe = neutralise(plan);
  const where = runURL
    ? `the [job summary and the \`cadence-plan\` artifact of the plan run](${runURL})`
    : "the plan run's job summary and its `cadence-plan` artifact";
  const note =
    "\n\n---\n\n**Truncated:** the plan is longer than a GitHub comment allows " +
    `(${LIMIT.toLocaleString("en-US")} characters). The whole plan is in ${where}.\n`;
  const whole = head + safe;
  if (bytes(whole) <= BUDGET) return whole;
  const { text } = fit(safe, BUDGET - bytes(head) - bytes(note));
  return head + text + note;
}

/** The body when a pull request no longer changes any wave file. */
export const NOTHING =
  "**cadence plan**: this pull request no longer changes a wave file; nothing to plan.\n";

class HTTPError extends Error {
  constructor(status, message) {
    super(`HTTP ${status}: ${message}`);
    this.status = status;
  }
}

function client(api, repo, token) {
  async function call(method, path, body) {
    const url = path.startsWith("http") ? path : `${api}/repos/${repo}${path}`;
    const res = await fetch(url, {
      method,
      headers: {
        Accept: "application/vnd.github+json",
        Authorization: `Bearer ${token}`,
        "X-GitHub-Api-Version": "2022-11-28",
        ...(body ? { "Content-Type": "application/json" } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    if (!res.ok) {
      let msg = text;
      try {
        msg = JSON.parse(text).message ?? text;
      } catch {}
      throw new HTTPError(res.status, String(msg).slice(0, 200));
    }
    return { data: text ? JSON.parse(text) : null, link: res.headers.get("link") || "" };
  }
  return { call };
}

/** next is the rel="next" URL of a Link header, or "". */
function next(link) {
  const m = /<([^>]+)>;\s*rel="next"/.exec(link);
  return m ? m[1] : "";
}

function summary(text) {
  const file = process.env.GITHUB_STEP_SUMMARY;
  if (file) appendFileSync(file, text + "\n");
  else process.stdout.write(text + "\n");
}

async function main() {
  const env = process.env;
  const api = (env.GITHUB_API_URL || "https://api.github.com").replace(/\/+$/, "");
  const repo = env.GITHUB_REPOSITORY || "";
  const token = env.GITHUB_TOKEN || "";
  const dir = env.CADENCE_PLAN_DIR || ".";
  const author = env.CADENCE_COMMENT_AUTHOR || "github-actions[bot]";
  if (!/^[\w.-]+\/[\w.-]+$/.test(repo)) throw new Error(`GITHUB_REPOSITORY ${JSON.stringify(repo)} is not owner/name`);
  if (!token) throw new Error("GITHUB_TOKEN is not set");
  const read = (name) => (existsSync(join(dir, name)) ? readFileSync(join(dir, name), "utf8") : "");
  const pr = (env.CADENCE_PR || read("pr")).trim();
  if (!/^[1-9][0-9]{0,9}$/.test(pr)) throw new Error(`the pull request number ${JSON.stringify(pr.slice(0, 20))} is not a number`);
  const plan = read("plan.md");
  const gh = client(api, repo, token);

  const want = (env.CADENCE_HEAD_SHA || "").trim();
  if (want) {
    const artifactSHA = read("head-sha").trim();
    if (artifactSHA && artifactSHA !== want) {
      console.log(`cadence comment: the artifact is of commit ${artifactSHA.slice(0, 40)}, not the run's ${want}: not commenting`);
      return 0;
    }
    const { data } = await gh.call("GET", `/pulls/${pr}`);
    if (data?.head?.sha !== want) {
      console.log(`cadence comment: pull request #${pr} is now at ${data?.head?.sha}, not the planned ${want}: a newer plan run comments`);
      return 0;
    }
  }

  let existing = null;
  try {
    for (let url = `/issues/${pr}/comments?per_page=100`; url && !existing; ) {
      const { data, link } = await gh.call("GET", url);
      if (!Array.isArray(data)) throw new Error(`listing the comments of #${pr} returned no list`);
      existing = data.find((c) => c.user?.login === author && String(c.body || "").startsWith(MARKER)) || null;
      url = next(link);
    }
  } catch (err) {
    if (err.status === 403 || err.status === 404) return noPermission(pr, err, compose(plan, env.CADENCE_RUN_URL));
    throw err;
  }

  if (plan.trim() === "" && !existing) {
    console.log(`cadence comment: no wave file planned and no comment on #${pr}: nothing to post`);
    return 0;
  }
  const body = plan.trim() === "" ? MARKER + "\n" + NOTHING : compose(plan, env.CADENCE_RUN_URL);
  try {
    if (existing) {
      await gh.call("PATCH", `/issues/comments/${existing.id}`, { body });
      console.log(`cadence comment: updated comment ${existing.id} on #${pr}`);
    } else {
      const { data } = await gh.call("POST", `/issues/${pr}/comments`, { body });
      console.log(`cadence comment: created comment ${data?.id} on #${pr}`);
    }
  } catch (err) {
    if (err.status === 403 || err.status === 404) return noPermission(pr, err, body);
    throw err;
  }
  return 0;
}

/** noPermission puts the plan in the job summary instead of a comment. */
function noPermission(pr, err, body) {
  const msg =
    `cadence comment: cannot comment on pull request #${pr} (${err.message}): ` +
    "the token is read-only here (a fork's pull request?); the plan is in the job summary";
  console.log(msg);
  summary(`> ${msg}\n\n${body}`);
  return 0;
}

const self = process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href;
if (self) {
  main().then(
    (code) => process.exit(code),
    (err) => {
      console.error(`cadence comment: ${err.message}`);
      process.exit(1);
    },
  );
}
