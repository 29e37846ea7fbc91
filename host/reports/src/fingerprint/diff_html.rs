//! The comparison as one self-contained HTML page (`socair tensors diff --html`): a map with
//! a row per layer and a column per tensor role, each cell coloured by outcome (and, for
//! tensors that differ, by how much), then the lists a person acts on. No network: the
//! style and the one script are inline, the page's Content-Security-Policy forbids any
//! fetch, and fonts are the system's.
//!
//! The map is drawn by the script on a canvas from compact data (a name template per role,
//! five numbers per tensor), so a 100k-tensor model makes a page of a few megabytes that
//! draws in well under a second.

use crate::fingerprint::diff::{layer_of, Comparison, Outcome, Pair, Side, Transform};
use crate::fingerprint::diff_text::{how, numbers_line, quantized_line};
use std::collections::HashMap;
use std::fmt::Write;

/// Tensors each table lists at most (the JSON has them all).
pub const TABLE_LIMIT: usize = 200;

/// Outcome codes of the map, in legend order: label, colour.
const CODES: &[(&str, &str)] = &[
    ("identical", "#1b7837"),
    ("same values", "#5aae61"),
    ("lower precision", "#a6dba0"),
    ("unpermuted", "#2166ac"),
    ("transposed", "#67a9cf"),
    ("not comparable", "#b0b0b0"),
    ("differs", "#d6604d"),
    ("only in artifact", "#f1a340"),
    ("only in reference", "#762a83"),
    ("quantized", "#35978f"),
    ("beyond quantization", "#67001f"),
];

fn code_of(p: &Pair) -> usize {
    match (p.outcome, p.transform) {
        (Outcome::NotComparable, _) => 5,
        (Outcome::Differs, _) => 6,
        (Outcome::SameWeightsQuantized, _) => 9,
        (Outcome::DiffersBeyondQuantization, _) => 10,
        (_, Some(Transform::Unpermute)) => 3,
        (_, Some(Transform::Transpose)) => 4,
        (Outcome::Identical, None) => 0,
        (Outcome::LowerPrecision, None) => 2,
        _ => 1,
    }
}

/// Escapes text for HTML.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// A name with its layer number replaced by `#`, and the layer.
fn template(name: &str) -> (String, Option<u64>) {
    let Some(layer) = layer_of(name) else {
        return (name.to_owned(), None);
    };
    let mut done = false;
    let parts: Vec<&str> = name
        .split('.')
        .map(|p| {
            if !done && !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) {
                done = true;
                "#"
            } else {
                p
            }
        })
        .collect();
    (parts.join("."), Some(layer))
}

/// Interns strings into a list.
#[derive(Default)]
struct Interner {
    list: Vec<String>,
    index: HashMap<String, usize>,
}

impl Interner {
    fn id(&mut self, s: String) -> usize {
        if let Some(&i) = self.index.get(&s) {
            return i;
        }
        self.list.push(s.clone());
        self.index.insert(s, self.list.len() - 1);
        self.list.len() - 1
    }
}

fn json_string(s: &str) -> String {
    // Safe inside <script>: no "</" can close the element.
    serde_json::to_string(s)
        .unwrap_or_else(|_| "\"\"".into())
        .replace("</", "<\\/")
}

/// The page's map data as a JS object literal: `roles` (name templates), `layers` (labels),
/// `cells` as flat quintuples `layer, role, code, relative change × 1e6 (−1 none), artifact
/// template (−1 when the artifact's name is the reference's)`.
fn map_data(c: &Comparison) -> String {
    let mut roles = Interner::default();
    let mut layers: Vec<Option<u64>> = Vec::new();
    let mut cells: Vec<[i64; 5]> = Vec::new();
    let mut push = |reference: &Side,
                    artifact: Option<&Side>,
                    code: usize,
                    rel: Option<f64>,
                    roles: &mut Interner| {
        let (t, layer) = template(&reference.name);
        let role = roles.id(t) as i64;
        let other = match artifact {
            Some(a) if a.name != reference.name => {
                let (ta, _) = template(&a.name);
                roles.id(ta) as i64
            }
            _ => -1,
        };
        layers.push(layer);
        let rel = rel.map_or(-1, |r| (r * 1e6).round().min(1e12) as i64);
        cells.push([0, role, code as i64, rel, other]);
    };
    for p in &c.pairs {
        let rel = p.numbers.as_ref().and_then(|n| n.relative_l2);
        push(&p.reference, Some(&p.artifact), code_of(p), rel, &mut roles);
    }
    for s in &c.only_in_artifact {
        push(s, None, 7, None, &mut roles);
    }
    for s in &c.only_in_reference {
        push(s, None, 8, None, &mut roles);
    }
    // Layers: the named ones in order, then one row for tensors outside any layer.
    let mut numbered: Vec<u64> = layers.iter().flatten().copied().collect();
    numbered.sort_unstable();
    numbered.dedup();
    let row_of: HashMap<u64, usize> = numbered
        .iter()
        .enumerate()
        .map(|(i, &l)| (l, i + 1))
        .collect();
    for (cell, layer) in cells.iter_mut().zip(&layers) {
        cell[0] = layer.map_or(0, |l| row_of[&l]) as i64;
    }
    let mut out = String::from("{\"roles\":[");
    for (i, r) in roles.list.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&json_string(r));
    }
    out.push_str("],\"layers\":[\"outside layers\"");
    for l in &numbered {
        let _ = write!(out, ",\"{l}\"");
    }
    out.push_str("],\"cells\":[");
    for (i, cell) in cells.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(
            out,
            "{},{},{},{},{}",
            cell[0], cell[1], cell[2], cell[3], cell[4]
        );
    }
    out.push_str("]}");
    out
}

fn chip(out: &mut String, code: usize, count: usize) {
    let (label, colour) = CODES[code];
    let _ = write!(
        out,
        "<span class=\"chip\"><i style=\"background:{colour}\"></i>{label} <b>{count}</b></span>"
    );
}

fn table_of_pairs(out: &mut String, title: &str, pairs: &[&Pair], numbers: bool) {
    if pairs.is_empty() {
        return;
    }
    let _ = write!(out, "<h2>{} ({})</h2><table><tr><th>artifact</th><th>reference</th><th>dtypes</th><th>{}</th></tr>", escape(title), pairs.len(), if numbers { "numbers" } else { "how" });
    for p in pairs.iter().take(TABLE_LIMIT) {
        let detail = match (numbers, &p.quantized) {
            (true, Some(_)) => quantized_line(p),
            (true, None) => numbers_line(p),
            (false, _) => how(p),
        };
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{} {:?} / {} {:?}</td><td>{}</td></tr>",
            escape(&p.artifact.name),
            escape(&p.reference.name),
            escape(&p.artifact.dtype),
            p.artifact.shape,
            escape(&p.reference.dtype),
            p.reference.shape,
            escape(&detail)
        );
    }
    out.push_str("</table>");
    if pairs.len() > TABLE_LIMIT {
        let _ = write!(
            out,
            "<p class=\"more\">… and {} more in the JSON.</p>",
            pairs.len() - TABLE_LIMIT
        );
    }
}

fn table_of_sides(out: &mut String, title: &str, sides: &[Side]) {
    if sides.is_empty() {
        return;
    }
    let _ = write!(
        out,
        "<h2>{} ({})</h2><table><tr><th>name</th><th>file</th><th>dtype</th><th>shape</th></tr>",
        escape(title),
        sides.len()
    );
    for s in sides.iter().take(TABLE_LIMIT) {
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:?}</td></tr>",
            escape(&s.name),
            escape(&s.file),
            escape(&s.dtype),
            s.shape
        );
    }
    out.push_str("</table>");
    if sides.len() > TABLE_LIMIT {
        let _ = write!(
            out,
            "<p class=\"more\">… and {} more in the JSON.</p>",
            sides.len() - TABLE_LIMIT
        );
    }
}

const STYLE: &str = r#"
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:20px 28px;color:#1a1a1a;background:#fff}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:22px 0 6px}
.sub{color:#555;margin-bottom:10px}.verdict{font-size:16px;font-weight:600;margin:8px 0 12px}
.chip{display:inline-block;margin:0 14px 6px 0;white-space:nowrap}.chip i{display:inline-block;width:13px;height:13px;margin-right:5px;vertical-align:-2px;border:1px solid #0003}
#wrap{position:relative;overflow:auto;max-height:78vh;border:1px solid #ddd;display:inline-block;max-width:100%}
#tip{position:fixed;pointer-events:none;background:#222;color:#fff;padding:5px 8px;border-radius:4px;font-size:12px;display:none;max-width:560px;z-index:2}
table{border-collapse:collapse;font-size:12.5px}td,th{border-bottom:1px solid #e4e4e4;padding:3px 8px;text-align:left;vertical-align:top}th{background:#f5f5f5}
.more{color:#666}.scale{display:inline-block;width:160px;height:12px;vertical-align:-2px;background:linear-gradient(90deg,#fddbc7,#d6604d,#67001f);border:1px solid #0003;margin:0 6px}
.note{color:#555;font-size:13px}pre{white-space:pre-wrap;font-size:12px}
"#;

const SCRIPT: &str = r#"
(function(){
var D=JSON.parse(document.getElementById('map-data').textContent);
var COLORS=JSON.parse(document.getElementById('map-colors').textContent);
var LABELS=JSON.parse(document.getElementById('map-labels').textContent);
var cells=D.cells,n=cells.length/5,roles=D.roles,layers=D.layers;
var usedRole=new Map(),rolesOrder=[];
for(var k=0;k<n;k++){var r=cells[5*k+1];if(!usedRole.has(r)){usedRole.set(r,0);rolesOrder.push(r);}}
rolesOrder.sort(function(a,b){var x=roles[a].indexOf('#')<0,y=roles[b].indexOf('#')<0;if(x!==y)return x?-1:1;return roles[a].localeCompare(roles[b],'en',{numeric:true});});
rolesOrder.forEach(function(r,i){usedRole.set(r,i);});
var cols=rolesOrder.length,rows=layers.length;
var cw=Math.max(3,Math.min(30,Math.floor(1100/Math.max(cols,1))));
var ch=Math.max(2,Math.min(20,Math.floor(2600/Math.max(rows,1))));
var left=110,top=cw>=9?150:10;
var cv=document.getElementById('map');
var W=left+cols*cw+(cw>=9?130:2),H=top+rows*ch+2;
cv.width=W;cv.height=H;cv.style.width=W+'px';cv.style.height=H+'px';
var g=cv.getContext('2d');g.fillStyle='#fff';g.fillRect(0,0,W,H);
function redScale(rel){
 if(rel<0)return COLORS[6];
 var t=Math.log10(Math.max(rel/1e6,1e-7));t=Math.min(1,Math.max(0,(t+7)/7));
 var a=[253,219,199],b=[214,96,77],c=[103,0,31],p,q,s;
 if(t<0.5){p=a;q=b;s=t*2;}else{p=b;q=c;s=(t-0.5)*2;}
 return 'rgb('+Math.round(p[0]+(q[0]-p[0])*s)+','+Math.round(p[1]+(q[1]-p[1])*s)+','+Math.round(p[2]+(q[2]-p[2])*s)+')';
}
var grid=new Int32Array(rows*cols).fill(-1);
// Same weights first, then everything else on top, at least 3 pixels tall so that one
// differing tensor among 100k still shows.
for(var pass=0;pass<2;pass++){
 for(var k=0;k<n;k++){
  var L=cells[5*k],c=usedRole.get(cells[5*k+1]),code=cells[5*k+2],rel=cells[5*k+3];
  if((code<5||code===9)!==(pass===0))continue;
  grid[L*cols+c]=k;
  g.fillStyle=code===6?redScale(rel):COLORS[code];
  var h=Math.max(1,ch-(ch>4?1:0)),y=top+L*ch;
  if(pass===1&&h<3){y-=Math.floor((3-h)/2);h=3;}
  g.fillRect(left+c*cw,y,Math.max(1,cw-(cw>4?1:0)),h);
 }
}
g.fillStyle='#333';g.font='11px system-ui,sans-serif';g.textBaseline='middle';
var every=Math.max(1,Math.ceil(12/ch));
for(var L=0;L<rows;L++){if(L===0||L%every===0){g.fillText(L===0?'no layer':'layer '+layers[L],4,top+L*ch+ch/2);}}
if(cw>=9){g.save();for(var i=0;i<cols;i++){var t=roles[rolesOrder[i]];var s=t.indexOf('#.')>=0?t.slice(t.indexOf('#.')+2):t;if(s.length>24)s='…'+s.slice(-23);
 g.save();g.translate(left+i*cw+cw/2,top-4);g.rotate(-Math.PI/2.6);g.textBaseline='middle';g.fillText(s,0,0);g.restore();}g.restore();}
var tip=document.getElementById('tip');
cv.addEventListener('mousemove',function(e){
 var b=cv.getBoundingClientRect(),x=e.clientX-b.left,y=e.clientY-b.top;
 var c=Math.floor((x-left)/cw),L=Math.floor((y-top)/ch);
 if(c<0||L<0||c>=cols||L>=rows||grid[L*cols+c]<0){tip.style.display='none';return;}
 var k=grid[L*cols+c];
 var name=function(t){return roles[t].replace('#',layers[L]);};
 var ref=name(cells[5*k+1]),art=cells[5*k+4]>=0?name(cells[5*k+4]):ref;
 var rel=cells[5*k+3],txt=LABELS[cells[5*k+2]]+': '+(art===ref?art:art+' \u2194 '+ref)+(rel>=0?' (relative L2 '+(rel/1e6).toPrecision(3)+')':'');
 tip.textContent=txt;tip.style.display='block';tip.style.left=(e.clientX+14)+'px';tip.style.top=(e.clientY+12)+'px';
});
cv.addEventListener('mouseleave',function(){tip.style.display='none';});
document.getElementById('drawn').textContent=n+' tensors in '+(rows)+' rows \u00d7 '+cols+' roles';
})();
"#;

/// Renders the comparison as one HTML page.
pub fn render(c: &Comparison, summary_text: &str) -> String {
    let a = &c.accounting;
    let mut out = String::with_capacity(4096 + c.pairs.len() * 40);
    let title = format!("{} against {}", c.artifact.name, c.reference.name);
    let _ = write!(
        out,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\
<meta name=\"viewport\" content=\"width=device-width\"><title>socair tensors diff: {}</title><style>{STYLE}</style></head><body>",
        escape(&title)
    );
    let _ = write!(
        out,
        "<h1>{}</h1><div class=\"sub\">artifact {} ({}, sha256 {}) · reference {} ({}, sha256 {}) · {}</div>",
        escape(&title),
        escape(&c.artifact.name),
        escape(&c.artifact.format),
        escape(&c.artifact.sha256.chars().take(16).collect::<String>()),
        escape(&c.reference.name),
        escape(&c.reference.format),
        escape(&c.reference.sha256.chars().take(16).collect::<String>()),
        escape(&c.schema)
    );
    let verdict = summary_text.lines().last().unwrap_or("").trim();
    let _ = write!(
        out,
        "<div class=\"verdict\">{} — same weights for {} of {} pairs</div><div>",
        escape(verdict),
        a.same_weights(),
        c.pairs.len()
    );
    for (code, count) in [
        a.identical,
        a.same_values,
        a.lower_precision,
        a.unpermuted,
        a.transposed,
        a.not_comparable,
        a.differs,
        a.only_in_artifact,
        a.only_in_reference,
        a.same_weights_quantized,
        a.differs_beyond_quantization,
    ]
    .into_iter()
    .enumerate()
    {
        // The quantized outcomes only when a side is quantized: most comparisons have none.
        if code < 9 || count > 0 {
            chip(&mut out, code, count);
        }
    }
    out.push_str("</div><div class=\"note\">differs is shaded by relative L2 change: 10<sup>−7</sup><span class=\"scale\"></span>1 · hover a cell for the tensor</div>");
    if let Some(why) = &c.numbers_missing {
        let _ = write!(out, "<p class=\"note\">No numbers: {}.</p>", escape(why));
    }
    let _ = write!(out, "<h2>Map: a row per layer, a column per tensor role <span class=\"note\" id=\"drawn\"></span></h2><div id=\"wrap\"><canvas id=\"map\" width=\"10\" height=\"10\"></canvas></div><div id=\"tip\"></div>");

    let mut differs: Vec<&Pair> = c
        .pairs
        .iter()
        .filter(|p| p.outcome == Outcome::Differs)
        .collect();
    differs.sort_by(|x, y| {
        let key = |p: &Pair| {
            p.numbers
                .as_ref()
                .and_then(|n| n.relative_l2)
                .unwrap_or(f64::INFINITY)
        };
        key(y).total_cmp(&key(x))
    });
    table_of_pairs(
        &mut out,
        "Differ, largest relative change first",
        &differs,
        true,
    );
    let beyond: Vec<&Pair> = c
        .pairs
        .iter()
        .filter(|p| p.outcome == Outcome::DiffersBeyondQuantization)
        .collect();
    table_of_pairs(&mut out, "Differ beyond quantization", &beyond, true);
    table_of_sides(&mut out, "Only in the artifact", &c.only_in_artifact);
    table_of_sides(&mut out, "Only in the reference", &c.only_in_reference);
    let not_comparable: Vec<&Pair> = c
        .pairs
        .iter()
        .filter(|p| p.outcome == Outcome::NotComparable)
        .collect();
    table_of_pairs(&mut out, "Not comparable", &not_comparable, false);
    let lower: Vec<&Pair> = c
        .pairs
        .iter()
        .filter(|p| p.outcome == Outcome::LowerPrecision)
        .collect();
    table_of_pairs(&mut out, "Same values at lower precision", &lower, true);
    let form: Vec<&Pair> = c
        .pairs
        .iter()
        .filter(|p| {
            (p.renamed
                || p.transform.is_some()
                || p.artifact.alias_of.is_some()
                || p.reference.alias_of.is_some())
                && !matches!(
                    p.outcome,
                    Outcome::Differs
                        | Outcome::NotComparable
                        | Outcome::LowerPrecision
                        | Outcome::SameWeightsQuantized
                        | Outcome::DiffersBeyondQuantization
                )
        })
        .collect();
    let quantized: Vec<&Pair> = c
        .pairs
        .iter()
        .filter(|p| p.outcome == Outcome::SameWeightsQuantized)
        .collect();
    table_of_pairs(&mut out, "Same weights, quantized", &quantized, true);
    table_of_pairs(
        &mut out,
        "Same weights under another name, alias or layout",
        &form,
        false,
    );
    let _ = write!(out, "<h2>Summary</h2><pre>{}</pre>", escape(summary_text));

    let colours: Vec<String> = CODES.iter().map(|(_, c)| json_string(c)).collect();
    let labels: Vec<String> = CODES.iter().map(|(l, _)| json_string(l)).collect();
    let _ = write!(
        out,
        "<script type=\"application/json\" id=\"map-data\">{}</script>\
<script type=\"application/json\" id=\"map-colors\">[{}]</script>\
<script type=\"application/json\" id=\"map-labels\">[{}]</script><script>{SCRIPT}</script></body></html>",
        map_data(c),
        colours.join(","),
        labels.join(",")
    );
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_put_the_layer_aside() {
        assert_eq!(
            template("blk.3.attn_q.weight"),
            ("blk.#.attn_q.weight".into(), Some(3))
        );
        assert_eq!(template("output.weight"), ("output.weight".into(), None));
        assert_eq!(escape("<a&\"'>"), "&lt;a&amp;&quot;&#39;&gt;");
        assert_eq!(json_string("</script>"), "\"<\\/script>\"");
    }
}
