/* piwork session export viewer: reads the embedded session and shows any branch of it.
 * Address fragment: #leaf=<entry id>&target=<entry id> shows the conversation from the root to
 * `leaf` and scrolls to `target`; &open=thinking,outputs unfolds thinking and long tool output (the
 * t and o keys toggle them). Nothing here loads anything from the network. */
(function () {
  "use strict";

  var DATA = JSON.parse(document.getElementById("session-data").textContent);
  var entries = DATA.entries || [];
  var outputLines = DATA.outputLines && typeof DATA.outputLines === "object" ? DATA.outputLines : null;
  var byId = new Map();
  var children = new Map();
  var labels = new Map();
  var resultsByCall = new Map();
  var ROOT = "\u0000root";

  entries.forEach(function (e, i) {
    e._seq = i;
    byId.set(e.id, e);
  });
  entries.forEach(function (e) {
    var parent = e.parentId && byId.has(e.parentId) && e.parentId !== e.id ? e.parentId : ROOT;
    if (!children.has(parent)) children.set(parent, []);
    children.get(parent).push(e);
    if (e.type === "label" && e.targetId) {
      if (e.label) labels.set(e.targetId, String(e.label));
      else labels.delete(e.targetId);
    }
    var m = e.message;
    if (e.type === "message" && m && m.role === "toolResult" && m.toolCallId) {
      resultsByCall.set(m.toolCallId, e);
    }
  });

  var sessionLeaf = DATA.leafId && byId.has(DATA.leafId) ? DATA.leafId : entries.length ? entries[entries.length - 1].id : null;
  var activeSet = new Set(pathTo(sessionLeaf).map(function (e) { return e.id; }));
  var state = { leaf: sessionLeaf, target: null, filter: "default", query: "", thinking: false, outputs: false };

  // ---------------------------------------------------------------- helpers
  function esc(text) {
    return String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
  }

  function pathTo(id) {
    var out = [];
    var seen = new Set();
    var e = id ? byId.get(id) : null;
    while (e && !seen.has(e.id)) {
      seen.add(e.id);
      out.push(e);
      e = e.parentId ? byId.get(e.parentId) : null;
    }
    return out.reverse();
  }

  function kids(id) {
    return children.get(id) || [];
  }

  /* The end of the branch that goes through `id`: the active child where there is one, else the newest. */
  function tipOf(id) {
    var current = id;
    var guard = 0;
    while (guard++ < 1e7) {
      var list = kids(current);
      if (!list.length) return current;
      var next = list.find(function (c) { return activeSet.has(c.id); }) || list[list.length - 1];
      current = next.id;
    }
    return current;
  }

  function contentText(content) {
    if (typeof content === "string") return content;
    if (!Array.isArray(content)) return "";
    return content.filter(function (b) { return b && b.type === "text" && typeof b.text === "string"; })
      .map(function (b) { return b.text; }).join("\n");
  }

  // A message that invoked a skill carries the skill's file in a <skill> block, then what the user typed.
  function skillBlock(text) {
    var found = /^<skill name="([^"]+)" location="([^"]+)">\n([\s\S]*?)\n<\/skill>(?:\n\n([\s\S]+))?$/.exec(text || "");
    return found ? { name: found[1], location: found[2], body: found[3], message: found[4] || "" } : null;
  }

  function roleOf(e) {
    return e.type === "message" && e.message ? e.message.role : e.type;
  }

  function isPureToolTurn(e) {
    var m = e.message;
    if (!m || m.role !== "assistant" || !Array.isArray(m.content)) return false;
    var hasText = m.content.some(function (b) { return b && b.type === "text" && String(b.text || "").trim(); });
    return !hasText && ["stop", "toolUse", undefined, null].indexOf(m.stopReason) >= 0;
  }

  function preview(e) {
    var m = e.message;
    switch (e.type) {
      case "message":
        if (!m) return "";
        if (m.role === "assistant") {
          var text = contentText(m.content);
          if (text.trim()) return text;
          var calls = (m.content || []).filter(function (b) { return b && b.type === "toolCall"; });
          return calls.map(function (c) { return c.name + " " + argsPreview(c.arguments); }).join("; ");
        }
        if (m.role === "toolResult") return "[" + (m.toolName || "tool") + "] " + contentText(m.content);
        if (m.role === "bashExecution") return "$ " + (m.command || "");
        var skill = m.role === "user" ? skillBlock(contentText(m.content)) : null;
        if (skill) return "skill " + skill.name + (skill.message ? " · " + skill.message : "");
        return contentText(m.content);
      case "compaction": return "Compaction: " + (e.summary || "");
      case "branch_summary": return "Branch summary: " + (e.summary || "");
      case "model_change": return "Model: " + (e.provider || "") + "/" + (e.modelId || "");
      case "thinking_level_change": return "Thinking: " + (e.thinkingLevel || "");
      case "label": return "Label: " + (e.label || "(cleared)");
      case "session_info": return "Name: " + (e.name || "");
      case "custom_message": return contentText(e.content);
      default: return e.type || "";
    }
  }

  function argsPreview(args) {
    if (!args || typeof args !== "object") return String(args == null ? "" : args);
    if (typeof args.command === "string") return args.command;
    if (typeof args.path === "string") return args.path;
    return JSON.stringify(args);
  }

  function oneLine(text, max) {
    var flat = String(text || "").replace(/\s+/g, " ").trim();
    return flat.length > max ? flat.slice(0, max - 1) + "…" : flat;
  }

  function when(stamp) {
    if (typeof stamp === "number") return new Date(stamp).toISOString().replace("T", " ").slice(0, 19);
    if (typeof stamp === "string") return stamp.replace("T", " ").slice(0, 19);
    return "";
  }

  // ---------------------------------------------------------------- code colouring (a light, generic one)
  var KEYWORDS = new Set(("if else elif for while return def class import from as with try except finally raise " +
    "function const let var new this self async await yield break continue switch case default public private " +
    "protected static void int float bool true false null None True False nil fn mut impl struct enum match pub " +
    "use mod package func go defer interface type in of not and or is lambda then fi do done esac export extends " +
    "implements throw throws catch").split(" "));
  var HASH_COMMENTS = /^(py|python|sh|bash|shell|zsh|console|rb|ruby|yaml|yml|toml|make|makefile|dockerfile|r|perl|pl|ini|conf)$/;
  var EXTENSIONS = { py: "python", js: "js", mjs: "js", ts: "ts", tsx: "ts", jsx: "js", go: "go", rs: "rust", java: "java",
    c: "c", h: "c", cc: "c", cpp: "c", hpp: "c", cs: "c", kt: "kotlin", swift: "swift", rb: "ruby", sh: "sh", bash: "sh",
    yaml: "yaml", yml: "yaml", toml: "toml", json: "json", css: "css", scss: "css", sql: "sql" };
  var HIGHLIGHT_LIMIT = 200000;  // longer texts stay plain: colouring them would slow the page

  function languageOf(path) {
    var dot = path.lastIndexOf(".");
    return dot >= 0 ? EXTENSIONS[path.slice(dot + 1).toLowerCase()] || "" : "";
  }

  function highlight(code, lang) {
    if (code.length > HIGHLIGHT_LIMIT) return esc(code);
    var pattern = HASH_COMMENTS.test(lang)
      ? /(#[^\n]*)|("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')|(\b\d[\d_.]*\b)|([A-Za-z_]\w*)/g
      : /(\/\/[^\n]*|\/\*[\s\S]*?\*\/)|("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`)|(\b\d[\d_.]*\b)|([A-Za-z_]\w*)/g;
    var out = "";
    var last = 0;
    var m;
    while ((m = pattern.exec(code))) {
      out += esc(code.slice(last, m.index));
      if (m[1]) out += '<span class="tok-c">' + esc(m[1]) + "</span>";
      else if (m[2]) out += '<span class="tok-s">' + esc(m[2]) + "</span>";
      else if (m[3]) out += '<span class="tok-n">' + esc(m[3]) + "</span>";
      else out += KEYWORDS.has(m[4]) ? '<span class="tok-k">' + m[4] + "</span>" : esc(m[4]);
      last = pattern.lastIndex;
    }
    return out + esc(code.slice(last));
  }

  // ---------------------------------------------------------------- markdown (a small, safe subset)
  function inline(text) {
    return String(text).split(/(`[^`\n]+`)/).map(function (part, i) {
      if (i % 2 === 1) return "<code>" + esc(part.slice(1, -1)) + "</code>";
      var s = esc(part);
      s = s.replace(/!\[([^\]]*)\]\(([^)\s]+)\)/g, function (_m, alt) { return "[image: " + alt + "]"; });
      s = s.replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, function (_m, label, target) {
        return /^(https?:|mailto:|#)/i.test(target) ? '<a href="' + target + '" rel="noreferrer noopener">' + label + "</a>" : label;
      });
      s = s.replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>");
      s = s.replace(/(^|[^*\w])\*([^*\s][^*]*)\*(?!\w)/g, "$1<em>$2</em>");
      return s;
    }).join("");
  }

  function markdown(src) {
    var lines = String(src || "").replace(/\r\n?/g, "\n").split("\n");
    var out = [];
    var i = 0;
    while (i < lines.length) {
      var line = lines[i];
      var fence = line.match(/^\s*(```+|~~~+)\s*([\w+#.-]*)/);
      if (fence) {
        var code = [];
        i++;
        while (i < lines.length && lines[i].trim().indexOf(fence[1]) !== 0) code.push(lines[i++]);
        i++;
        var source = code.join("\n");
        out.push('<pre class="code"><code>' + (fence[2] ? highlight(source, fence[2].toLowerCase()) : esc(source)) + "</code></pre>");
        continue;
      }
      var heading = line.match(/^(#{1,6})\s+(.*)$/);
      if (heading) {
        var level = Math.min(6, heading[1].length + 2);
        out.push("<h" + level + ">" + inline(heading[2]) + "</h" + level + ">");
        i++;
        continue;
      }
      if (/^\s*([-*+]|\d+[.)])\s+/.test(line)) {
        var ordered = /^\s*\d/.test(line);
        var items = [];
        while (i < lines.length && /^\s*([-*+]|\d+[.)])\s+/.test(lines[i])) {
          items.push("<li>" + inline(lines[i].replace(/^\s*([-*+]|\d+[.)])\s+/, "")) + "</li>");
          i++;
        }
        out.push((ordered ? "<ol>" : "<ul>") + items.join("") + (ordered ? "</ol>" : "</ul>"));
        continue;
      }
      if (/^>\s?/.test(line)) {
        var quote = [];
        while (i < lines.length && /^>\s?/.test(lines[i])) quote.push(lines[i++].replace(/^>\s?/, ""));
        out.push("<blockquote>" + markdown(quote.join("\n")) + "</blockquote>");
        continue;
      }
      if (!line.trim()) {
        i++;
        continue;
      }
      var para = [];
      while (i < lines.length && lines[i].trim() && !/^\s*(```|~~~|#{1,6}\s|>|[-*+]\s|\d+[.)]\s)/.test(lines[i])) {
        para.push(inline(lines[i++]));
      }
      if (!para.length) para.push(inline(lines[i++]));
      out.push("<p>" + para.join("<br>") + "</p>");
    }
    return out.join("\n");
  }

  // ---------------------------------------------------------------- messages
  var LONG_LINES = 12;
  var LONG_CHARS = 1500;

  // Lines as the tools count them (a final newline ends the last line). A tool result's or shell run's
  // output comes with its count worked out by the engine (DATA.outputLines), the window's own figure.
  function countLines(body) {
    if (!body) return 0;
    var newlines = body.split("\n").length - 1;
    return body.charAt(body.length - 1) === "\n" ? newlines : newlines + 1;
  }

  function outputBlock(text, title, lang, entryId) {
    var body = String(text || "");
    var known = entryId != null && outputLines ? outputLines[entryId] : undefined;
    var count = typeof known === "number" ? known : countLines(body);
    var pre = '<pre class="output">' + (lang ? highlight(body, lang) : esc(body)) + "</pre>";
    if (count <= LONG_LINES && body.length <= LONG_CHARS) return pre;
    var label = esc(title) + " — " + count + " line" + (count === 1 ? "" : "s") + ": " + esc(oneLine(body.split("\n")[0], 80));
    return '<details class="output"' + (state.outputs ? " open" : "") + "><summary>" + label + "</summary>" + pre + "</details>";
  }

  function images(content) {
    if (!Array.isArray(content)) return "";
    return content.filter(function (b) { return b && b.type === "image" && typeof b.data === "string"; })
      .map(function (b) {
        var mime = /^image\/[\w.+-]+$/.test(b.mimeType || "") ? b.mimeType : "image/png";
        return '<img class="image" alt="attached image" src="data:' + mime + ";base64," + esc(b.data) + '">';
      }).join("");
  }

  function toolCall(block, shownResults) {
    var args = block.arguments || {};
    var name = String(block.name || "tool");
    var head = '<span class="tool-name">' + esc(name) + "</span> ";
    var body = "";
    if (name === "bash" && typeof args.command === "string") {
      head += '<code class="command">$ ' + esc(oneLine(args.command, 200)) + "</code>";
      if (args.command.indexOf("\n") >= 0) body += outputBlock(args.command, "Command");
    } else if ((name === "read" || name === "ls" || name === "find" || name === "grep") && typeof (args.path || args.pattern) === "string") {
      head += '<code>' + esc([args.pattern, args.path].filter(Boolean).join(" in ")) + "</code>";
      if (args.offset || args.limit) head += ' <span class="muted">lines ' + esc((args.offset || 1) + (args.limit ? "–" + ((args.offset || 1) + args.limit - 1) : "")) + "</span>";
    } else if (name === "edit" && typeof args.path === "string" && recordedDiff(block.id, shownResults)) {
      head += "<code>" + esc(args.path) + "</code>";
      body += recordedDiff(block.id, shownResults);
    } else if (name === "edit" && typeof args.path === "string") {
      head += "<code>" + esc(args.path) + "</code>";
      var edits = Array.isArray(args.edits) ? args.edits : [args];
      body += edits.map(function (ed) {
        var minus = String(ed.oldText || "").split("\n").map(function (l) { return '<span class="del">- ' + esc(l) + "</span>"; });
        var plus = String(ed.newText || "").split("\n").map(function (l) { return '<span class="add">+ ' + esc(l) + "</span>"; });
        return '<pre class="diff">' + minus.concat(plus).join("") + "</pre>";
      }).join("");
    } else if (name === "write" && typeof args.path === "string") {
      head += "<code>" + esc(args.path) + "</code>";
      body += outputBlock(args.content, "Content", languageOf(args.path));
    } else {
      body += outputBlock(JSON.stringify(args, null, 2), "Arguments");
    }
    var result = resultsByCall.get(block.id);
    if (result && shownResults.has(result.id)) {
      body += toolResultBody(result, name === "read" && typeof args.path === "string" ? languageOf(args.path) : "");
    } else {
      body += '<div class="muted">(no result on this branch)</div>';
    }
    var error = result && result.message && result.message.isError ? " error" : "";
    return '<div class="tool' + error + '">' + '<div class="tool-head">' + head + "</div>" + body + "</div>";
  }

  // The edit tool records the change it made as numbered lines ("-12 old", "+12 new", " 13 same"):
  // shown as such when the result is on the branch, so the page shows the lines as they were in the file.
  function recordedDiff(callId, shownResults) {
    var result = resultsByCall.get(callId);
    var details = result && shownResults.has(result.id) && result.message ? result.message.details : null;
    if (!details || typeof details.diff !== "string" || !details.diff) return "";
    var rows = details.diff.split("\n").map(function (line) {
      var cls = line[0] === "+" ? "add" : line[0] === "-" ? "del" : "same";
      return '<span class="' + cls + '">' + esc(line) + "</span>";
    });
    return '<pre class="diff recorded" title="The change as the edit tool recorded it (line numbers of the file)">' + rows.join("") + "</pre>";
  }

  function toolResultBody(entry, lang) {
    var m = entry.message || {};
    var text = contentText(m.content);
    var out = '<div class="tool-result' + (entry.id === state.target ? " target" : "") + '" id="entry-' + esc(entry.id) + '" data-id="' + esc(entry.id) + '">';
    out += outputBlock(text, m.isError ? "Error" : "Output", m.isError ? "" : lang, entry.id) + images(m.content);
    var details = m.details || {};
    if (details.truncation && details.truncation.truncated) {
      out += '<div class="muted">Output was truncated for the model';
      if (details.fullOutputPath) out += "; full output kept at <code>" + esc(details.fullOutputPath) + "</code>";
      out += ".</div>";
    }
    return out + "</div>";
  }

  function siblingSwitcher(e) {
    var parent = e.parentId && byId.has(e.parentId) ? e.parentId : ROOT;
    var siblings = kids(parent).filter(function (s) { return s.type !== "label"; });
    if (siblings.length < 2) return "";
    var index = siblings.findIndex(function (s) { return s.id === e.id; });
    var prev = siblings[(index - 1 + siblings.length) % siblings.length];
    var next = siblings[(index + 1) % siblings.length];
    return '<span class="switch" title="Other branches from here">' +
      '<a href="#leaf=' + encodeURIComponent(tipOf(prev.id)) + "&target=" + encodeURIComponent(prev.id) + '" class="prev">◀</a> ' +
      "branch " + (index + 1) + " of " + siblings.length +
      ' <a href="#leaf=' + encodeURIComponent(tipOf(next.id)) + "&target=" + encodeURIComponent(next.id) + '" class="next">▶</a></span>';
  }

  // One assistant message's figures: tokens in and out, cache reads and writes, and its cost.
  function messageFigures(u) {
    if (!u || typeof u !== "object") return "";
    var parts = [];
    if (+u.input) parts.push(count(+u.input) + " in");
    if (+u.output) parts.push(count(+u.output) + " out");
    if (+u.cacheRead) parts.push(count(+u.cacheRead) + " cache read");
    if (+u.cacheWrite) parts.push(count(+u.cacheWrite) + " cache write");
    var cost = u.cost && +u.cost.total;
    if (cost) parts.push("$" + cost.toFixed(4));
    return parts.length ? '<div class="figures" title="Tokens and cost of this answer">' + esc(parts.join(" · ")) + "</div>" : "";
  }

  function count(n) { return n.toLocaleString("en-US"); }

  function card(e, kind, title, body) {
    var label = labels.get(e.id);
    var cls = "entry " + kind + (e.id === state.target ? " target" : "") + (activeSet.has(e.id) ? "" : " off-path");
    return '<section class="' + cls + '" id="entry-' + esc(e.id) + '" data-id="' + esc(e.id) + '">' +
      '<div class="entry-head"><span class="who">' + esc(title) + "</span>" +
      (label ? ' <span class="label">' + esc(label) + "</span>" : "") +
      siblingSwitcher(e) + '<span class="when">' + esc(when(e.timestamp)) + "</span>" +
      '<a class="permalink" title="Link to this message" href="#leaf=' + encodeURIComponent(state.leaf || "") +
      "&target=" + encodeURIComponent(e.id) + '">#</a></div>' +
      body + "</section>";
  }

  function renderEntry(e, shownResults) {
    var m = e.message;
    switch (e.type) {
      case "message":
        if (!m) return "";
        if (m.role === "user") {
          var invoked = skillBlock(contentText(m.content));
          if (invoked) {
            return card(e, "user", "User · skill " + invoked.name,
              '<details class="skill"><summary>Skill <code>' + esc(invoked.name) + '</code> <span class="muted">' + esc(invoked.location) +
              "</span></summary>" + markdown(invoked.body) + "</details>" + markdown(invoked.message) + images(m.content));
          }
          return card(e, "user", "User", markdown(contentText(m.content)) + images(m.content));
        }
        if (m.role === "assistant") {
          var parts = (Array.isArray(m.content) ? m.content : [{ type: "text", text: String(m.content || "") }]).map(function (b) {
            if (!b) return "";
            if (b.type === "text") return markdown(b.text);
            if (b.type === "thinking") return '<details class="thinking"' + (state.thinking ? " open" : "") + "><summary>Thinking</summary>" + markdown(b.thinking) + "</details>";
            if (b.type === "toolCall") return toolCall(b, shownResults);
            if (b.type === "image") return images([b]);
            return "";
          }).join("");
          var meta = [m.provider && m.model ? m.provider + "/" + m.model : m.model, m.stopReason && m.stopReason !== "stop" && m.stopReason !== "toolUse" ? "stopped: " + m.stopReason : ""];
          if (m.errorMessage) parts += '<div class="error-text">' + esc(m.errorMessage) + "</div>";
          parts += messageFigures(m.usage);
          return card(e, "assistant", "Assistant" + (meta.filter(Boolean).length ? " · " + meta.filter(Boolean).join(" · ") : ""), parts);
        }
        if (m.role === "toolResult") {
          if (resultsByCall.get(m.toolCallId) === e && callOnPath(m.toolCallId)) return "";  // shown in its call
          return card(e, "tool-result-card", "Tool result · " + (m.toolName || ""), toolResultBody(e));
        }
        if (m.role === "bashExecution") {
          return card(e, "bash", "You ran", '<code class="command">$ ' + esc(m.command || "") + "</code>" + outputBlock(m.output, "Output", "", e.id) +
            (m.exitCode ? '<div class="muted">exit code ' + esc(m.exitCode) + "</div>" : ""));
        }
        return card(e, "custom", m.role || "message", markdown(contentText(m.content)));
      case "compaction":
        return card(e, "summary compaction", "Compaction" + (e.tokensBefore ? " · " + e.tokensBefore + " tokens before" : ""),
          '<details class="summary-text"><summary>Summary of the earlier conversation</summary>' + markdown(e.summary) + "</details>");
      case "branch_summary":
        return card(e, "summary branch-summary", "Branch summary",
          '<details class="summary-text" open><summary>What happened on the branch left behind</summary>' + markdown(e.summary) + "</details>");
      case "model_change":
        return '<div class="meta-line" id="entry-' + esc(e.id) + '">Model → ' + esc((e.provider || "") + "/" + (e.modelId || "")) + "</div>";
      case "thinking_level_change":
        return '<div class="meta-line" id="entry-' + esc(e.id) + '">Thinking level → ' + esc(e.thinkingLevel || "") + "</div>";
      case "custom_message":
        return e.display === false ? "" : card(e, "custom", e.customType || "custom", markdown(contentText(e.content)));
      default:
        return "";
    }
  }

  var callsOnPath = new Set();
  function callOnPath(id) { return callsOnPath.has(id); }

  /* A long branch is shown a window at a time (WINDOW entries around the target, or its end), with
   * buttons for the entries before and after: a browser lays out tens of thousands of cards slowly. */
  var WINDOW = 200;
  var shown = { start: 0, end: 0, leaf: null };

  function renderMessages(keep) {
    var path = pathTo(state.leaf);
    if (!keep || shown.leaf !== state.leaf) {
      var at = state.target ? path.findIndex(function (e) { return e.id === state.target; }) : -1;
      shown.end = at >= 0 ? Math.min(path.length, at + WINDOW / 2) : path.length;
      shown.start = Math.max(0, shown.end - WINDOW);
      shown.end = Math.min(path.length, Math.max(shown.end, shown.start + WINDOW));
      shown.leaf = state.leaf;
    }
    var shownResults = new Set(path.map(function (e) { return e.id; }));
    callsOnPath = new Set();
    path.forEach(function (e) {
      var m = e.message;
      if (e.type === "message" && m && m.role === "assistant" && Array.isArray(m.content)) {
        m.content.forEach(function (b) { if (b && b.type === "toolCall") callsOnPath.add(b.id); });
      }
    });
    var onActive = activeSet.has(state.leaf);
    var banner = onActive
      ? '<div class="banner">Active branch · ' + path.length + " entries</div>"
      : '<div class="banner other">Another branch · ' + path.length + ' entries · <a href="#leaf=' + encodeURIComponent(sessionLeaf || "") + '">back to the active branch</a></div>';
    var before = shown.start > 0
      ? '<button class="more" data-more="earlier">Show earlier entries (' + shown.start + " more)</button>" : "";
    var after = shown.end < path.length
      ? '<button class="more" data-more="later">Show later entries (' + (path.length - shown.end) + " more)</button>" : "";
    var html = banner + before + path.slice(shown.start, shown.end).map(function (e) { return renderEntry(e, shownResults); }).join("\n") + after;
    var pane = document.getElementById("messages");
    pane.innerHTML = html;
    pane.setAttribute("data-leaf", state.leaf || "");
    if (keep) return;
    var focus = document.getElementById("entry-" + (state.target || state.leaf));
    if (focus && focus.scrollIntoView) focus.scrollIntoView({ block: state.target ? "center" : "end" });
  }

  function showMore(which) {
    var pane = document.getElementById("messages");
    var height = pane.scrollHeight;
    var top = pane.scrollTop;
    if (which === "earlier") shown.start = Math.max(0, shown.start - WINDOW);
    else shown.end += WINDOW;
    renderMessages(true);
    if (which === "earlier") pane.scrollTop = top + (pane.scrollHeight - height);  // stay on what was read
  }

  // ---------------------------------------------------------------- tree
  var HIDDEN_BY_DEFAULT = { label: 1, custom: 1, model_change: 1, thinking_level_change: 1, session_info: 1 };

  function shows(e, words) {
    var f = state.filter;
    var role = roleOf(e);
    if (f === "user-only" && role !== "user") return false;
    if (f === "labeled" && !labels.has(e.id)) return false;
    if (f !== "all" && f !== "labeled" && HIDDEN_BY_DEFAULT[e.type]) return false;
    if (f === "no-tools" && role === "toolResult") return false;
    if (f !== "all" && isPureToolTurn(e) && e.id !== sessionLeaf) return false;
    if (words.length) {
      var text = (preview(e) + " " + (labels.get(e.id) || "")).toLowerCase();
      return words.every(function (w) { return text.indexOf(w) >= 0; });
    }
    return true;
  }

  function renderTree() {
    var words = state.query.toLowerCase().split(/\s+/).filter(Boolean);
    var onPath = new Set(pathTo(state.leaf).map(function (e) { return e.id; }));
    var rows = [];
    var stack = kids(ROOT).slice().reverse().map(function (e) { return [e, kids(ROOT).length > 1 ? 1 : 0]; });
    while (stack.length) {
      var item = stack.pop();
      var e = item[0];
      var depth = item[1];
      if (shows(e, words)) {
        var role = roleOf(e);
        var cls = "node role-" + esc(role) + (activeSet.has(e.id) ? " active" : "") + (onPath.has(e.id) ? " on-path" : "") +
          (e.id === state.target ? " selected" : "") + (e.id === sessionLeaf ? " leaf" : "");
        var label = labels.get(e.id);
        rows.push('<div class="' + cls + '" data-id="' + esc(e.id) + '" style="padding-left:' + (4 + Math.min(depth, 30) * 12) + 'px">' +
          '<span class="dot">' + (activeSet.has(e.id) ? "●" : "○") + "</span>" +
          '<span class="role">' + esc(role === "toolResult" ? "tool" : role) + "</span> " +
          (label ? '<span class="label">' + esc(label) + "</span> " : "") + esc(oneLine(preview(e), 90)) + "</div>");
      }
      var list = kids(e.id);
      var nested = list.length > 1 ? depth + 1 : depth;
      for (var k = list.length - 1; k >= 0; k--) stack.push([list[k], nested]);
    }
    treeRows = rows;
    document.getElementById("tree-count").textContent = rows.length + " shown";
    var tree = document.getElementById("tree");
    tree.innerHTML = '<div class="spacer" style="height:' + rows.length * ROW_HEIGHT + 'px"></div>';
    var focus = rows.findIndex(function (r) { return r.indexOf(" selected") >= 0; });
    if (focus < 0) focus = rows.length - 1 - rows.slice().reverse().findIndex(function (r) { return r.indexOf(" on-path") >= 0; });
    tree.scrollTop = Math.max(0, Math.min(focus, rows.length - 1) * ROW_HEIGHT - tree.clientHeight / 2);
    paintTree();
  }

  /* The tree lists only the rows in view (fixed-height rows in a spacer as tall as all of them). */
  var ROW_HEIGHT = 20;
  var treeRows = [];
  function paintTree() {
    var tree = document.getElementById("tree");
    if (!treeRows.length) {
      tree.innerHTML = '<div class="muted">No entry matches.</div>';
      return;
    }
    var first = Math.max(0, Math.floor(tree.scrollTop / ROW_HEIGHT) - 20);
    var count = Math.ceil((tree.clientHeight || 600) / ROW_HEIGHT) + 40;
    var last = Math.min(treeRows.length, first + count);
    tree.innerHTML = '<div class="spacer" style="height:' + treeRows.length * ROW_HEIGHT + 'px"><div class="rows" style="top:' +
      first * ROW_HEIGHT + 'px">' + treeRows.slice(first, last).join("") + "</div></div>";
  }

  // ---------------------------------------------------------------- graph
  function renderGraph() {
    var lanes = new Map();
    var depthOf = new Map();
    var nextLane = 0;
    var maxDepth = 0;
    var order = [];
    var stack = kids(ROOT).slice().reverse().map(function (e) { return [e, 0]; });
    while (stack.length) {
      var item = stack.pop();
      var e = item[0];
      depthOf.set(e.id, item[1]);
      maxDepth = Math.max(maxDepth, item[1]);
      order.push(e);
      var list = kids(e.id).slice().sort(function (a, b) { return (activeSet.has(b.id) ? 1 : 0) - (activeSet.has(a.id) ? 1 : 0); });
      if (!list.length) lanes.set(e.id, nextLane++);
      for (var k = list.length - 1; k >= 0; k--) stack.push([list[k], item[1] + 1]);
    }
    for (var j = order.length - 1; j >= 0; j--) {  // a node sits in the lane of its first child's subtree
      var node = order[j];
      if (lanes.has(node.id)) continue;
      var first = kids(node.id).find(function (c) { return activeSet.has(c.id); }) || kids(node.id)[0];
      lanes.set(node.id, lanes.get(first.id));
    }
    var width = 220;
    var laneGap = Math.max(6, Math.min(22, (width - 20) / Math.max(1, nextLane)));
    var height = Math.max(60, Math.min(360, maxDepth * 4 + 30));
    var y = function (d) { return 12 + (maxDepth ? (d / maxDepth) * (height - 24) : 0); };
    var x = function (l) { return 10 + l * laneGap; };
    var parts = [];
    var points = [];
    order.forEach(function (e) {
      var parent = e.parentId && byId.has(e.parentId) ? byId.get(e.parentId) : null;
      var lane = lanes.get(e.id);
      if (parent && lanes.get(parent.id) !== lane) {
        parts.push('<line class="edge' + (activeSet.has(e.id) ? " active" : "") + '" x1="' + x(lanes.get(parent.id)) + '" y1="' + y(depthOf.get(parent.id)) +
          '" x2="' + x(lane) + '" y2="' + y(depthOf.get(e.id)) + '"></line>');
        points.push([parent, "fork"]);
      }
      if (!kids(e.id).length) points.push([e, "tip"]);
    });
    var laneSpan = new Map();
    order.forEach(function (e) {
      var lane = lanes.get(e.id);
      var d = depthOf.get(e.id);
      var span = laneSpan.get(lane) || [d, d, activeSet.has(e.id)];
      laneSpan.set(lane, [Math.min(span[0], d), Math.max(span[1], d), span[2] || activeSet.has(e.id)]);
    });
    laneSpan.forEach(function (span, lane) {
      parts.unshift('<line class="edge' + (span[2] ? " active" : "") + '" x1="' + x(lane) + '" y1="' + y(span[0]) + '" x2="' + x(lane) + '" y2="' + y(span[1]) + '"></line>');
    });
    var shownPath = new Set(pathTo(state.leaf).map(function (q) { return q.id; }));
    points.forEach(function (p) {
      var e = p[0];
      var leaf = tipOf(e.id);
      var current = shownPath.has(e.id) && p[1] === "tip";
      parts.push('<circle class="' + p[1] + (activeSet.has(e.id) ? " active" : "") + (current ? " current" : "") + '" data-leaf="' + esc(leaf) + '" data-id="' + esc(e.id) +
        '" cx="' + x(lanes.get(e.id)) + '" cy="' + y(depthOf.get(e.id)) + '" r="' + (p[1] === "tip" ? 5 : 3.5) + '"><title>' +
        esc(oneLine(preview(e), 80)) + "</title></circle>");
    });
    var svgWidth = Math.max(width, 20 + nextLane * laneGap);
    document.getElementById("graph").innerHTML = '<svg width="' + svgWidth + '" height="' + height + '" role="img" aria-label="Tree of the session: ' +
      nextLane + ' branch tips">' + parts.join("") + "</svg>";
    document.getElementById("graph-caption").textContent = nextLane + (nextLane === 1 ? " branch" : " branches") + " · " + entries.length + " entries";
  }

  // ---------------------------------------------------------------- header and layout
  function stats() {
    var s = { user: 0, assistant: 0, tools: 0, results: 0, branchSummaries: 0, compactions: 0, custom: 0, input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cost: 0, models: new Set() };
    entries.forEach(function (e) {
      var m = e.message;
      if (e.type === "branch_summary") s.branchSummaries++;
      else if (e.type === "compaction") s.compactions++;
      else if (e.type === "custom_message") s.custom++;
      if (e.type !== "message" || !m) return;
      if (m.role === "user") s.user++;
      if (m.role === "toolResult") s.results++;
      if (m.role === "assistant") {
        s.assistant++;
        if (m.model) s.models.add((m.provider ? m.provider + "/" : "") + m.model);
        (Array.isArray(m.content) ? m.content : []).forEach(function (b) { if (b && b.type === "toolCall") s.tools++; });
        var u = m.usage || {};
        s.input += +u.input || 0;
        s.output += +u.output || 0;
        s.cacheRead += +u.cacheRead || 0;
        s.cacheWrite += +u.cacheWrite || 0;
        s.cost += u.cost && +u.cost.total ? +u.cost.total : 0;
      }
    });
    return s;
  }

  // A tool's parameters from its JSON schema: name, type, whether it is required, what it is for.
  function toolParameters(schema) {
    var props = schema && typeof schema === "object" && schema.properties && typeof schema.properties === "object" ? schema.properties : null;
    if (!props || !Object.keys(props).length) return "";
    var required = new Set(Array.isArray(schema.required) ? schema.required : []);
    return '<ul class="params">' + Object.keys(props).map(function (name) {
      var p = props[name] || {};
      var type = Array.isArray(p.type) ? p.type.join(" | ") : p.type || (p.enum ? "one of " + p.enum.join(", ") : "any");
      return '<li><code>' + esc(name) + '</code> <span class="muted">' + esc(type) + (required.has(name) ? ", required" : ", optional") +
        "</span>" + (p.description ? " — " + esc(p.description) : "") + "</li>";
    }).join("") + "</ul>";
  }

  // The session as a file again: its header and every entry, one JSON value a line (what Pi and piwork open).
  function downloadSession() {
    var lines = [JSON.stringify(DATA.header || {})].concat(entries.map(function (e) { return JSON.stringify(e); }));
    var blob = new Blob([lines.join("\n") + "\n"], { type: "application/x-ndjson" });
    var link = document.createElement("a");
    link.href = URL.createObjectURL(blob);
    link.download = (DATA.header && DATA.header.id ? "session-" + DATA.header.id : "session") + ".jsonl";
    document.body.appendChild(link);
    link.click();
    setTimeout(function () { URL.revokeObjectURL(link.href); link.remove(); }, 1000);
  }

  function renderShell() {
    var h = DATA.header || {};
    var s = stats();
    var facts = [
      ["Session", h.id], ["Folder", h.cwd], ["Created", when(h.timestamp)], ["Exported", when(DATA.exportedAt) + " by " + DATA.generator],
      ["Messages", [[s.user, "user"], [s.assistant, "assistant"], [s.results, "tool results"], [s.custom, "extension messages"]]
        .filter(function (p, i) { return i < 2 || p[0]; }).map(function (p) { return p[0] + " " + p[1]; }).join(" · ")],
      ["Tool calls", String(s.tools)],
      ["Summaries", s.branchSummaries + (s.branchSummaries === 1 ? " branch summary" : " branch summaries") + " · " +
        s.compactions + (s.compactions === 1 ? " compaction" : " compactions")],
      ["Tokens", s.input + " in · " + s.output + " out · " + s.cacheRead + " cache read · " + s.cacheWrite + " cache write"],
      ["Cost", "$" + s.cost.toFixed(4)], ["Models", Array.from(s.models).join(", ") || "—"],
    ];
    var extra = "";
    if (DATA.systemPrompt) extra += '<details class="system"><summary>System prompt</summary><pre class="output">' + esc(DATA.systemPrompt) + "</pre></details>";
    if (DATA.tools && DATA.tools.length) {
      extra += '<details class="system"><summary>Tools (' + DATA.tools.length + ")</summary><ul>" + DATA.tools.map(function (t) {
        return "<li><code>" + esc(t.name) + "</code> " + esc(t.description || "") + toolParameters(t.parameters) + "</li>";
      }).join("") + "</ul></details>";
    }
    document.getElementById("app").innerHTML =
      '<header><h1>' + esc(DATA.title) + "</h1><dl>" + facts.map(function (f) { return "<dt>" + esc(f[0]) + "</dt><dd>" + esc(f[1] == null ? "" : f[1]) + "</dd>"; }).join("") + "</dl>" + extra +
      '<div class="toggles"><label><input type="checkbox" id="open-thinking"> Show thinking (t)</label> ' +
      '<label><input type="checkbox" id="open-outputs"> Show long tool output (o)</label> ' +
      '<button type="button" id="download-session" title="Save this session as a .jsonl file that piwork and Pi open">Save as session file (.jsonl)</button></div></header>' +
      '<div class="layout"><aside><div class="graph-box"><div id="graph"></div><div id="graph-caption" class="muted"></div></div>' +
      '<div class="tree-tools"><select id="filter" aria-label="Which entries the tree lists">' +
      [["default", "Conversation"], ["no-tools", "Without tool results"], ["user-only", "Only your messages"],
        ["labeled", "Only labelled entries"], ["all", "Everything"]].map(function (f) {
        return '<option value="' + f[0] + '">' + f[1] + "</option>";
      }).join("") +
      '</select><input id="tree-search" type="search" placeholder="Search entries"><span id="tree-count" class="muted"></span></div>' +
      '<div id="tree" role="tree"></div></aside>' +
      '<div id="aside-resizer" role="separator" aria-orientation="vertical" tabindex="0" title="Drag (or use the arrow keys) to widen or narrow the tree"></div>' +
      '<main id="messages"></main></div>';
  }

  function readFragment() {
    var params = new URLSearchParams((location.hash || "").replace(/^#/, ""));
    var leaf = params.get("leaf");
    var target = params.get("target");
    state.leaf = leaf && byId.has(leaf) ? leaf : sessionLeaf;
    state.target = target && byId.has(target) ? target : null;
    var open = (params.get("open") || "").split(",");
    if (open.indexOf("thinking") >= 0) state.thinking = true;
    if (open.indexOf("outputs") >= 0) state.outputs = true;
  }

  function show() {
    readFragment();
    document.getElementById("open-thinking").checked = state.thinking;
    document.getElementById("open-outputs").checked = state.outputs;
    renderMessages();
    renderTree();
    renderGraph();
  }

  function go(leaf, target) {
    var fragment = "#leaf=" + encodeURIComponent(leaf) + (target ? "&target=" + encodeURIComponent(target) : "");
    if (location.hash === fragment) show();
    else location.hash = fragment;
  }

  renderShell();
  document.getElementById("tree").addEventListener("click", function (ev) {
    var row = ev.target.closest("[data-id]");
    if (row) go(tipOf(row.getAttribute("data-id")), row.getAttribute("data-id"));
  });
  document.getElementById("graph").addEventListener("click", function (ev) {
    var dot = ev.target.closest("circle");
    if (dot) go(dot.getAttribute("data-leaf"), dot.getAttribute("data-id"));
  });
  document.getElementById("filter").addEventListener("change", function (ev) { state.filter = ev.target.value; renderTree(); });
  var timer = null;
  document.getElementById("tree-search").addEventListener("input", function (ev) {
    clearTimeout(timer);
    timer = setTimeout(function () { state.query = ev.target.value; renderTree(); }, 150);
  });
  var painting = false;
  document.getElementById("tree").addEventListener("scroll", function () {
    if (painting) return;
    painting = true;
    requestAnimationFrame(function () { painting = false; paintTree(); });
  });
  document.getElementById("messages").addEventListener("click", function (ev) {
    var button = ev.target.closest("button.more");
    if (button) showMore(button.getAttribute("data-more"));
    var image = ev.target.closest("img.image");
    if (image) showImage(image);
  });
  // An image at its own size over the page; a click or Escape closes it.
  function showImage(image) {
    var overlay = document.createElement("div");
    overlay.className = "image-overlay";
    overlay.setAttribute("role", "dialog");
    overlay.setAttribute("aria-label", "Image at full size (click or Escape to close)");
    var big = document.createElement("img");
    big.src = image.src;
    big.alt = image.alt;
    overlay.appendChild(big);
    overlay.addEventListener("click", function () { overlay.remove(); });
    document.body.appendChild(overlay);
  }
  document.getElementById("download-session").addEventListener("click", downloadSession);
  function toggle(which, value) {
    state[which] = value;
    document.getElementById(which === "thinking" ? "open-thinking" : "open-outputs").checked = value;
    renderMessages(true);
  }
  document.getElementById("open-thinking").addEventListener("change", function (ev) { toggle("thinking", ev.target.checked); });
  document.getElementById("open-outputs").addEventListener("change", function (ev) { toggle("outputs", ev.target.checked); });
  document.addEventListener("keydown", function (ev) {
    if (ev.key === "Escape") {
      var overlays = document.querySelectorAll(".image-overlay");
      overlays.forEach(function (o) { o.remove(); });
      if (!overlays.length) backToSessionLeaf();
      return;
    }
    if (ev.ctrlKey || ev.metaKey || ev.altKey || /^(INPUT|SELECT|TEXTAREA)$/.test(ev.target.tagName)) return;
    if (ev.key === "t") toggle("thinking", !state.thinking);
    if (ev.key === "o") toggle("outputs", !state.outputs);
  });
  // Escape: the tree's search is cleared and the page goes back to the session's own leaf.
  function backToSessionLeaf() {
    var search = document.getElementById("tree-search");
    if (search.value) {
      search.value = "";
      state.query = "";
      renderTree();
    }
    if (sessionLeaf) go(sessionLeaf, null);
  }

  // The tree's width follows the separator when it is dragged (or moved with the arrow keys).
  var resizer = document.getElementById("aside-resizer");
  function setAsideWidth(px) {
    var width = Math.max(200, Math.min(px, window.innerWidth * 0.7));
    document.querySelector("aside").style.width = width + "px";
    paintTree();
  }
  resizer.addEventListener("pointerdown", function (ev) {
    ev.preventDefault();
    resizer.setPointerCapture(ev.pointerId);
    var left = document.querySelector("aside").getBoundingClientRect().left;
    function move(e) { setAsideWidth(e.clientX - left); }
    function up() {
      resizer.removeEventListener("pointermove", move);
      resizer.removeEventListener("pointerup", up);
    }
    resizer.addEventListener("pointermove", move);
    resizer.addEventListener("pointerup", up);
  });
  resizer.addEventListener("keydown", function (ev) {
    var step = ev.key === "ArrowLeft" ? -24 : ev.key === "ArrowRight" ? 24 : 0;
    if (step) {
      ev.preventDefault();
      setAsideWidth(document.querySelector("aside").getBoundingClientRect().width + step);
    }
  });
  window.addEventListener("hashchange", show);
  show();
  document.body.setAttribute("data-ready", "1");
})();
