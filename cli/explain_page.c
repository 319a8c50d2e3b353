/* hark explain's page, DIR/index.html: one self-contained file, the trace inside
 * it as JSON and a script that draws it on canvases (no network, no other files).
 * When the script has drawn everything, the body gets data-drawn="ok"; an error
 * shows in a red box (id js-error): the test reads both from the rendered page. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explain.h"

static const char HEAD[] =
    "<!doctype html>\n<html lang=en><head><meta charset=utf-8><title>hark explain</title>\n"
    "<style>\n"
    "body{font:14px/1.4 sans-serif;margin:16px;color:#222;background:#fff}\n"
    "h1{font-size:20px}h2{font-size:16px;margin-top:28px}\n"
    "table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;padding:2px 6px;"
    "text-align:left;white-space:nowrap}th{background:#eee}\n"
    ".num{text-align:right}.note{color:#666;max-width:900px}\n"
    "#tip{position:fixed;pointer-events:none;background:#222;color:#fff;padding:3px 6px;"
    "font-size:12px;border-radius:3px;display:none}\n"
    "#js-error{background:#c00;color:#fff;padding:8px}\n"
    ".maps{display:flex;flex-wrap:wrap;gap:10px}.maps div{font-size:11px;text-align:center}\n"
    "</style></head>\n<body>\n<div id=tip></div>\n"
    "<script>window.onerror=function(m){var e=document.createElement('div');e.id='js-error';"
    "e.textContent='error: '+m;document.body.prepend(e)};</script>\n";

/* The drawing: heatmaps with hover labels, the tables. */
static const char SCRIPT[] =
    "<h1>hark explain</h1><p id=summary></p>\n"
    "<h2>Cross-attention: where each token listens</h2>\n"
    "<p class=note>Rows: the tokens of the window; columns: the audio, one column a 20 ms frame. "
    "Each row is a softmax over the frames (scaled per row to its maximum here). "
    "&#9733; marks the model's alignment heads, which word timing uses.</p>\n"
    "<select id=crossSel></select><br><canvas id=cross></canvas>\n"
    "<h2>Decoder self-attention (causal)</h2>\n"
    "<p class=note>Row i: how token i weighs tokens 0..i. Above the diagonal the causal mask "
    "leaves exact zeros: a token never sees the future, so past keys and values never change "
    "and the KV cache holds them.</p>\n"
    "<select id=selfSel></select><br><canvas id=self></canvas>\n"
    "<h2>Logit lens: the residual stream after each layer, read as text</h2>\n"
    "<p class=note>Each layer's residual stream through the final LayerNorm and the output "
    "projection: the top candidate and its probability. The last layer is the real output.</p>\n"
    "<div id=lens></div>\n"
    "<h2>Encoder heads: local or global</h2>\n"
    "<p class=note>Each head's 1500x1500 (or T x T) attention, averaged into 50x50 cells; "
    "mean distance between a frame and what it attends to, in seconds.</p>\n"
    "<div id=enc class=maps></div>\n"
    "<h2>Why divide by sqrt(d_k)</h2>\n"
    "<p class=note>Spread of the raw q&middot;k scores and of the scaled ones, and the "
    "softmax's entropy (nats) both ways: without the scaling the softmax saturates.</p>\n"
    "<div id=sqrt></div>\n"
    "<div id=occ></div>\n"
    "<h2>Same token, different context</h2>\n"
    "<p class=note>A token that occurs twice: the cosine of its two hidden states after each "
    "layer. The same embedding at the start; context pulls them apart layer by layer.</p>\n"
    "<div id=ctx></div>\n"
    "<h2>Steps: the next-token candidates</h2><div id=steps></div>\n"
    "<h2>Shapes, stage by stage</h2><div id=shapes></div>\n"
    "<script>\n"
    "const T=TRACE,W=T.window,toks=T.tokens,tip=document.getElementById('tip');\n"
    "function esc(s){return String(s).replace(/[&<>]/g,c=>({'&':'&amp;','<':'&lt;','>':'&gt;'}[c]))}\n"
    "function color(v){v=Math.max(0,Math.min(1,v));return 'rgb('+Math.round(255*(1-v))+','+"
    "Math.round(255*(1-0.55*v))+','+Math.round(255-80*v)+')'}\n"
    "function heat(cv,rows,cell,label){const n=rows.length,m=rows[0].length;"
    "const cw=Math.max(1,Math.min(cell,Math.floor(1100/m))),ch=cell;cv.width=m*cw;cv.height=n*ch;"
    "const g=cv.getContext('2d');g.fillStyle='#fff';g.fillRect(0,0,cv.width,cv.height);"
    "rows.forEach((r,i)=>{let mx=Math.max(...r)||1;r.forEach((v,j)=>{g.fillStyle=color(v/mx);"
    "g.fillRect(j*cw,i*ch,cw,ch)})});"
    "cv.onmousemove=e=>{const b=cv.getBoundingClientRect(),j=Math.floor((e.clientX-b.left)/cw),"
    "i=Math.floor((e.clientY-b.top)/ch);if(i<0||j<0||i>=n||j>=m)return;tip.style.display='block';"
    "tip.style.left=(e.clientX+12)+'px';tip.style.top=(e.clientY+12)+'px';"
    "tip.textContent=label(i,j,rows[i][j])};cv.onmouseleave=()=>tip.style.display='none'}\n"
    "function ttext(i){return JSON.stringify(toks[i].text)}\n"
    "function options(sel,L,H,mark,draw){for(let l=0;l<L;l++)for(let h=0;h<H;h++){"
    "const o=document.createElement('option');o.value=l+','+h;"
    "o.textContent='layer '+l+' head '+h+(mark(l,h)?' \\u2605':'');sel.appendChild(o)}"
    "sel.onchange=()=>{const [l,h]=sel.value.split(',').map(Number);draw(l,h)}}\n"
    "const AH=W.alignment_heads,isAH=(l,h)=>AH.some(a=>a[0]==l&&a[1]==h);\n"
    "const L=T.cross.length,H=T.cross[0].length,from=W.n_start-1;\n"
    "function drawCross(l,h){const rows=T.cross[l][h].slice(from).map(r=>r.w);"
    "heat(document.getElementById('cross'),rows,10,(i,j,v)=>ttext(from+i)+' at '+"
    "(W.start_s+j*W.frame_s).toFixed(2)+' s: '+v.toPrecision(3))}\n"
    "function drawSelf(l,h){const rows=T.decoder_self[l][h];"
    "heat(document.getElementById('self'),rows,12,(i,j,v)=>ttext(i)+' \\u2190 '+ttext(j)+': '+"
    "v.toPrecision(3))}\n"
    "options(document.getElementById('crossSel'),L,H,isAH,drawCross);"
    "options(document.getElementById('selfSel'),L,H,()=>false,drawSelf);\n"
    "const first=AH.length?AH[0]:[L-1,0];document.getElementById('crossSel').value=first.join(',');"
    "drawCross(first[0],first[1]);drawSelf(L-1,0);\n";

static const char SCRIPT_TABLES[] =
    "function table(head,rows){return '<table><tr>'+head.map(h=>'<th>'+esc(h)+'</th>').join('')+"
    "'</tr>'+rows.map(r=>'<tr>'+r.map(c=>typeof c=='number'?'<td class=num>'+c+'</td>':"
    "'<td>'+esc(c)+'</td>').join('')+'</tr>').join('')+'</table>'}\n"
    "const text=toks.filter(t=>t.kind=='text').map(t=>t.text).join('');\n"
    "document.getElementById('summary').textContent='Window '+W.index+' at '+W.start_s.toFixed(2)+"
    "' s, '+(toks.length-W.n_start)+' tokens: '+text;\n"
    "const lensRows=T.steps.filter(s=>s.text!==undefined).map(s=>[s.text].concat("
    "T.lens[s.position].map(c=>c[0].text+' '+c[0].p.toFixed(2))));\n"
    "document.getElementById('lens').innerHTML=table(['token taken'].concat(T.lens[0].map((_,l)=>"
    "'after layer '+l)),lensRows);\n"
    "const enc=document.getElementById('enc');T.encoder_heads.forEach((layer,l)=>layer.forEach((s,h)=>{"
    "const d=document.createElement('div'),c=document.createElement('canvas');d.appendChild(c);"
    "d.appendChild(document.createElement('br'));d.append('L'+l+' H'+h+': '+s.mean_distance_s.toFixed(2)+"
    "' s');enc.appendChild(d);heat(c,s.map,2,(i,j,v)=>'layer '+l+' head '+h+': '+v.toPrecision(3))}));\n"
    "const sq=[];T.encoder_heads.forEach((layer,l)=>layer.forEach((s,h)=>sq.push(['encoder',l,h,"
    "+s.score_std.toFixed(3),+s.score_std_scaled.toFixed(3),+s.entropy.toFixed(3),"
    "+s.entropy_unscaled.toFixed(3)])));T.cross_heads.forEach((layer,l)=>layer.forEach((s,h)=>"
    "sq.push(['cross',l,h,+s.score_std.toFixed(3),+s.score_std_scaled.toFixed(3),"
    "+s.entropy.toFixed(3),+s.entropy_unscaled.toFixed(3)])));\n"
    "document.getElementById('sqrt').innerHTML=table(['attention','layer','head','std q.k',"
    "'std q.k/sqrt(d)','entropy scaled','entropy unscaled'],sq);\n"
    "document.getElementById('steps').innerHTML=table(['position','token','p','suppressed',"
    "'KV cache bytes','candidates'],T.steps.map(s=>[s.position,s.text===undefined?'(end)':s.text,"
    "s.p_search===undefined?'':+s.p_search.toFixed(4),s.suppressed,s.kv_cache_bytes,"
    "s.top.map(c=>c.text+' '+c.p.toFixed(3)).join(' | ')]));\n"
    "const S=T.shapes,sr=[];S.stages.forEach(st=>st.rows.forEach(r=>sr.push([st.stage+' x'+st.times,"
    "r.tensor,'('+r.shape+')','('+r.numbers.join(', ')+')',r.op,r.params,r.flops])));\n"
    "document.getElementById('shapes').innerHTML=table(['stage','tensor','shape','numbers',"
    "'operation','params','FLOPs'],sr)+'<p>parameters: '+S.totals.total_params+'</p>';\n"
    "if(T.occlusion){const O=T.occlusion,occ=document.getElementById('occ');"
    "occ.innerHTML='<h2>Is attention an explanation? (occlusion)</h2><p class=note>Each '+O.span_s+"
    "' s of the audio masked in turn: the log-probability each token loses (rows: text tokens, "
    "columns: spans). Below, per cross-attention head, the rank correlation (Spearman) between "
    "its attention on the spans and that loss, averaged over the tokens: high, the head looks "
    "where the evidence is.</p><canvas id=occmap></canvas><div id=rho></div>';"
    "const pos=toks.map((t,i)=>i).filter(i=>toks[i].kind=='text');"
    "heat(document.getElementById('occmap'),pos.map(i=>O.effect[i].map(v=>Math.max(v,0))),12,"
    "(i,j,v)=>ttext(pos[i])+', '+(W.start_s+j*O.span_s).toFixed(1)+' s masked: loses '+"
    "v.toFixed(3)+' nats');"
    "document.getElementById('rho').innerHTML=table(['layer'].concat(O.head_rho[0].map((_,h)=>"
    "'head '+h)),O.head_rho.map((r,l)=>[l].concat(r.map((v,h)=>v.toFixed(3)+(isAH(l,h)?' \u2605':'')))))}\n"
    "document.getElementById('ctx').innerHTML=T.contextual.length?table(['token','positions']."
    "concat(T.lens[0].map((_,l)=>'after layer '+l)),T.contextual.map(c=>[JSON.stringify(c.text),"
    "c.positions.join(' and ')].concat(c.cosine.map(v=>+v.toFixed(3))))):'<p>no token occurs twice</p>';\n"
    "document.body.dataset.drawn='ok';\n"
    "</script></body></html>\n";

char *explain_page(const char *trace_json)
{
    char *s = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&s, &n);
    if (!f)
        return NULL;
    /* "</" cannot end the script early: the JSON escapes no slash, so break it */
    fputs(HEAD, f);
    fputs("<script>const TRACE=", f);
    for (const char *p = trace_json; *p; p++) {
        if (p[0] == '<' && p[1] == '/')
            fputs("<\\", f);
        else
            fputc(*p, f);
    }
    fputs(";</script>\n", f);
    fputs(SCRIPT, f);
    fputs(SCRIPT_TABLES, f);
    if (fclose(f) != 0) {
        free(s);
        return NULL;
    }
    return s;
}
