"""The style sheet ``index.html`` carries inline (the page loads nothing from the network)."""

from __future__ import annotations

CSS = """
:root { --ink:#1f2328; --mute:#59636e; --line:#d1d9e0; --bad:#cf222e; --bad-bg:#ffebe9;
  --ok:#1a7f37; --ok-bg:#dafbe1; --user:#ddf4ff; --asst:#f6f8fa; --tool:#fff8c5; }
* { box-sizing: border-box; }
body { margin:0; font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;
  color:var(--ink); background:#fff; }
main { max-width:1100px; margin:0 auto; padding:24px 28px 64px; }
h1 { font-size:26px; margin:0 0 8px; } h2 { font-size:20px; margin:36px 0 10px;
  border-bottom:1px solid var(--line); padding-bottom:4px; } h3 { font-size:17px; margin:0 0 6px; }
code, pre { font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace; font-size:13px; }
pre { white-space:pre-wrap; word-break:break-word; margin:4px 0; }
table { border-collapse:collapse; margin:8px 0; }
th, td { border:1px solid var(--line); padding:4px 10px; text-align:left; vertical-align:top; }
td { font-variant-numeric: tabular-nums; }
.headline { font-size:17px; font-weight:600; margin:4px 0; }
.note { margin:2px 0; color:var(--bad); }
.facts th { background:#f6f8fa; font-weight:600; width:150px; }
.facts td { word-break:break-all; }
.matrix td { text-align:center; min-width:120px; vertical-align:middle; }
.matrix tr:first-child th { white-space:nowrap; }
.how { margin:6px 0; padding-left:20px; font-size:13px; } .how code { word-break:break-all; }
.matrix td.hit { background:var(--bad-bg); color:var(--bad); font-weight:600; }
.matrix td.ok { color:var(--ok); } .matrix td.unk { color:var(--mute); }
.matrix td.off { color:#aaa; background:#fafafa; }
.kinds { font-size:11px; font-weight:400; }
.sig { font-weight:400; color:var(--mute); font-size:13px; }
.legend { color:var(--mute); font-size:13px; margin:4px 0; }
.clean { color:var(--ok); font-weight:600; }
.finding { border:1px solid var(--line); border-radius:8px; padding:16px 18px; margin:16px 0;
  border-left:5px solid var(--bad); }
.meta { color:var(--mute); margin:0 0 6px; } .meta a { word-break:break-all; }
.symptoms { margin:4px 0 8px; padding-left:20px; }
.modes { color:var(--mute); font-size:13px; }
.chip { display:inline-block; border:1px solid var(--line); border-radius:12px; padding:0 9px;
  margin:2px 6px 2px 0; font-size:12px; background:#f6f8fa; }
.chip.mode { background:#0969da; color:#fff; border-color:#0969da; }
.chip.tool { background:#fbefff; }
.chat { display:flex; flex-direction:column; gap:8px; margin:10px 0; }
.bubble { max-width:78%; border:1px solid var(--line); border-radius:12px; padding:8px 12px; }
.bubble .who { font-size:11px; text-transform:uppercase; letter-spacing:.05em; color:var(--mute);
  font-weight:600; margin-bottom:2px; }
.bubble.user { align-self:flex-end; background:var(--user); border-color:#9cd0ff; }
.bubble.system { align-self:center; background:#eef1f4; max-width:90%; }
.bubble.assistant { align-self:flex-start; background:var(--asst); }
.bubble.tool { align-self:flex-start; margin-left:28px; background:var(--tool);
   border-color:#e5d57a; }
.bubble.reasoning { align-self:flex-start; background:#fff; border-style:dashed;
   font-style:italic; }
.bubble.foreign, .bubble.request { align-self:stretch; max-width:100%; background:#fafafa; }
.bubble.answer { align-self:flex-start; background:#fff; }
.bubble.failing { border:2px solid var(--bad); box-shadow:0 0 0 3px var(--bad-bg); }
.flag { color:#fff; background:var(--bad); border-radius:4px; padding:0 6px; letter-spacing:0; }
.why { color:var(--bad); font-size:13px; margin:2px 0 6px; }
.reasoning { color:var(--mute); font-style:italic; }
.empty { color:var(--mute); font-style:italic; }
.error { color:var(--bad); font-family:ui-monospace,monospace; font-size:13px; }
.evidence, .status, .for { color:var(--mute); font-size:13px; }
.call { border:1px solid var(--line); border-radius:8px; background:#fff; padding:4px 8px;
   margin:4px 0; }
.callhead { font-size:13px; }
.id { display:inline-flex; align-items:baseline; gap:4px; border-radius:4px; padding:0 4px;
  border:1px solid; white-space:nowrap; }
.id code { font-weight:600; }
.id .fam { font-size:10px; text-transform:uppercase; letter-spacing:.04em; opacity:.8; }
.g-openai { background:#dafbe1; border-color:#4ac26b; color:#116329; }
.g-vllm { background:#fff1e5; border-color:#fb8f44; color:#953800; }
.g-kimi { background:#fbefff; border-color:#c297ff; color:#6e40c9; }
.g-odd { background:#ffebe9; border-color:#ff8182; color:#a40e26; }
.g-other { background:#ddf4ff; border-color:#54aeff; color:#0550ae; }
details { margin:6px 0; } summary { cursor:pointer; color:#0969da; }
.session td.bad { color:var(--bad); }
.plot { max-width:100%; height:auto; display:block; margin:8px 0; }
.plot .grid { stroke:#e6e9ec; } .plot .bar { fill:#cf222e; opacity:.85; }
.plot .axis { font-size:12px; fill:#59636e; } .plot .val { font-size:12px; fill:#1f2328;
   font-weight:600; }
.plot .n { font-size:10px; fill:#8c959f; }
.coverage td { text-align:right; } .coverage tr.refused { color:var(--mute); background:#fafafa; }
.coverage td:last-child { text-align:left; }
"""
