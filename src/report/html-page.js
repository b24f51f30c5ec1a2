// html-page.js - the script of memtap's timeline page (out-html.c):
// draws the charts, the flame graph of the selected intervals and the
// suspects' table from the JSON data element.  No network, no library.
// Names are only ever set as text (textContent, setAttribute), never
// parsed as markup.
"use strict";
(function () {
	var D = JSON.parse(document.getElementById("data").textContent);
	var NS = document.getElementById("flame").namespaceURI;	// SVG's
	var W = 1200, PAD_L = 80, PAD_R = 20, FRAME_H = 16, CHAR_W = 7.08;
	var AV = W - 2 * 10;
	var PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
		       "#edc948", "#b07aa1", "#ff9da7", "#9c755f"];
	var OTHER = "#bab0ac", TOP = 8;
	var N = D.intervals.length, NS_ = D.stacks.length;
	var T = N ? D.intervals[N - 1][0] : 1;
	var sel = null, weight = "acquired", term = "", marked = -1, zoomPath = [];
	var drawn = [], rootNode = null, charts = [], areas = {};

	function el(id) { return document.getElementById(id); }
	function mk(tag, attrs, parent, text) {
		var e = document.createElementNS(NS, tag);
		for (var k in attrs)
			e.setAttribute(k, attrs[k]);
		if (text !== undefined)
			e.textContent = text;
		if (parent)
			parent.appendChild(e);
		return e;
	}
	function hmk(tag, parent, text) {
		var e = document.createElement(tag);
		if (text !== undefined)
			e.textContent = text;
		if (parent)
			parent.appendChild(e);
		return e;
	}
	function human(n) {
		var units = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"], v = Math.abs(n), u = -1;
		if (D.unit !== "bytes")
			return n + " " + D.unit;
		if (v < 1024)
			return n + " bytes";
		while (v >= 1024 && u < 5) { v /= 1024; u++; }
		return (n < 0 ? "-" : "") + v.toFixed(2) + " " + units[u];
	}
	function secs(ns) { return (ns / 1e9).toFixed(2) + " s"; }
	function frames(s) { return D.stacks[s] ? D.stacks[s].split(";") : []; }
	// A stack's name: its last two frames (the allocator and its caller).
	function leaf(s) {
		var f = frames(s), n = f.length;
		if (!n)
			return "[no stack]";
		var t = n > 1 ? f[n - 2] + " \u2192 " + f[n - 1] : f[0];
		return t.length > 70 ? t.slice(0, 68) + ".." : t;
	}
	function startOf(i) { return i > 0 ? D.intervals[i - 1][0] : 0; }

	// ---- the charts ----

	// Per sample, per interval: held at its end, or acquired in it.
	function levels() {
		var y = [], level = new Array(NS_).fill(0);
		for (var s = 0; s < NS_; s++)
			y.push(new Array(N).fill(0));
		D.intervals.forEach(function (iv, i) {
			iv[4].forEach(function (c) {
				if (c[0] >= NS_)
					return;
				if (D.held)
					level[c[0]] = c[4];
				else
					y[c[0]][i] = c[2];
			});
			if (D.held)
				for (var s = 0; s < NS_; s++)
					y[s][i] = level[s];
		});
		return y;
	}
	function xOf(t) { return PAD_L + (W - PAD_L - PAD_R) * t / (T || 1); }
	function intervalAt(x) {
		var t = (x - PAD_L) / (W - PAD_L - PAD_R) * T;
		for (var i = 0; i < N; i++)
			if (t <= D.intervals[i][0])
				return i;
		return N - 1;
	}
	function chart(id, title, h, max) {
		var s = mk("svg", { id: id, "class": "chart", width: W, height: h,
				    viewBox: "0 0 " + W + " " + h });
		var top = 24, bottom = h - 22;
		mk("text", { x: PAD_L, y: 15 }, s, title);
		max = max > 0 ? max : 1;
		for (var k = 0; k <= 4; k++) {
			var y = bottom - (bottom - top) * k / 4;
			mk("line", { x1: PAD_L, x2: W - PAD_R, y1: y, y2: y, stroke: "#e4e4e4" }, s);
			mk("text", { x: PAD_L - 4, y: y + 4, "text-anchor": "end" }, s, human(Math.round(max * k / 4)));
		}
		for (k = 0; k <= 6; k++) {
			var t = T * k / 6;
			mk("text", { x: xOf(t), y: h - 6, "text-anchor": "middle" }, s, secs(t));
		}
		var c = { svg: s, y: function (v) { return bottom - (bottom - top) * v / max; },
			  top: top, bottom: bottom };
		c.sel = mk("rect", { "class": "sel hide", y: top, height: bottom - top, x: 0, width: 0 });
		charts.push(c);
		el("charts").appendChild(s);
		return c;
	}
	function line(c, vals, colour, name, lx) {
		var pts = vals.map(function (v, i) { return xOf(D.intervals[i][0]).toFixed(1) + "," + c.y(v).toFixed(1); });
		mk("polyline", { points: pts.join(" "), fill: "none", stroke: colour, "stroke-width": 2,
				 "class": "series", "data-name": name }, c.svg);
		mk("rect", { x: lx, y: 6, width: 10, height: 10, fill: colour }, c.svg);
		mk("text", { x: lx + 14, y: 15 }, c.svg, name);
	}
	function drawCharts() {
		var rss = D.intervals.map(function (iv) { return iv[2]; });
		var size = D.intervals.map(function (iv) { return iv[3]; });
		var cap = D.intervals.map(function (iv) { return iv[1]; });
		var c = chart("memory", "Memory over time", 220, Math.max.apply(null, rss.concat(size, cap, [0])));
		line(c, size, "#9c755f", "VmSize", W - 420);
		line(c, rss, "#e15759", "VmRSS", W - 320);
		line(c, cap, "#4e79a7", D.held ? "captured (held)" : "captured (net)", W - 220);

		var y = levels(), order = [];
		for (var s = 0; s < NS_; s++)
			order.push({ s: s, max: Math.max.apply(null, y[s].concat([0])) });
		order = order.filter(function (o) { return o.max > 0; });
		order.sort(function (a, b) { return b.max - a.max || a.s - b.s; });
		var top = order.slice(0, TOP), rest = order.slice(TOP), layers = [];
		top.forEach(function (o, k) { layers.push({ s: o.s, v: y[o.s], colour: PALETTE[k], name: leaf(o.s) }); });
		if (rest.length) {
			var other = new Array(N).fill(0);
			rest.forEach(function (o) { y[o.s].forEach(function (v, i) { other[i] += v; }); });
			layers.push({ s: -1, v: other, colour: OTHER, name: rest.length + " other stacks" });
		}
		var sum = new Array(N).fill(0), max = 0;
		layers.forEach(function (l) { l.v.forEach(function (v, i) { sum[i] += v; }); });
		sum.forEach(function (v) { if (v > max) max = v; });
		c = chart("stacks", D.held ? "Held bytes of the heaviest stacks" :
			  "Bytes acquired in each interval by the heaviest stacks", 240, max);
		var base = new Array(N).fill(0);
		layers.forEach(function (l, k) {
			var upper = [], lower = [];
			for (var i = 0; i < N; i++) {
				var x = xOf(D.intervals[i][0]).toFixed(1);
				lower.push(x + "," + c.y(base[i]).toFixed(1));
				base[i] += l.v[i];
				upper.push(x + "," + c.y(base[i]).toFixed(1));
			}
			if (N === 1) {
				upper.unshift(xOf(0).toFixed(1) + "," + c.y(base[0]).toFixed(1));
				lower.unshift(xOf(0).toFixed(1) + "," + c.y(base[0] - l.v[0]).toFixed(1));
			}
			var p = mk("polygon", { points: upper.concat(lower.reverse()).join(" "), fill: l.colour,
						"class": "area", "data-sample": l.s }, c.svg);
			mk("title", {}, p, l.name + " (" + human(Math.max.apply(null, l.v)) + " at most)");
			if (l.s >= 0)
				areas[l.s] = p;
			var lg = hmk("span", el("legend"));
			lg.className = "key";
			lg.style.borderLeft = "12px solid " + l.colour;
			lg.style.paddingLeft = "4px";
			lg.style.marginRight = "12px";
			lg.textContent = l.name;
		});
		charts.forEach(function (ch) {
			ch.svg.appendChild(ch.sel);
			ch.svg.addEventListener("mousedown", function (e) { drag(e, ch, true); });
		});
	}
	function svgX(e, svg) {
		var r = svg.getBoundingClientRect();
		return (e.clientX - r.left) * W / r.width;
	}
	function drag(e, ch, down) {
		var a = intervalAt(svgX(e, ch.svg));
		e.preventDefault();
		function move(ev) {
			var b = intervalAt(svgX(ev, ch.svg));
			showSel([Math.min(a, b), Math.max(a, b)]);
		}
		function up(ev) {
			window.removeEventListener("mousemove", move);
			window.removeEventListener("mouseup", up);
			var b = intervalAt(svgX(ev, ch.svg));
			select(Math.min(a, b), Math.max(a, b));
		}
		if (down) {
			showSel([a, a]);
			window.addEventListener("mousemove", move);
			window.addEventListener("mouseup", up);
		}
	}
	function showSel(r) {
		charts.forEach(function (c) {
			c.sel.classList.toggle("hide", !r);
			if (!r)
				return;
			var x0 = xOf(startOf(r[0])), x1 = xOf(D.intervals[r[1]][0]);
			c.sel.setAttribute("x", x0.toFixed(1));
			c.sel.setAttribute("width", Math.max(x1 - x0, 1).toFixed(1));
		});
	}

	// ---- the flame graph ----

	function weights() {
		var w = new Array(NS_).fill(0), a = sel ? sel[0] : 0, b = sel ? sel[1] : N - 1;
		if (!N)
			return D.whole.slice();
		for (var i = a; i <= b; i++)
			D.intervals[i][4].forEach(function (c) {
				if (c[0] < NS_)
					w[c[0]] += weight === "acquired" ? c[2] : weight === "released" ? c[3] : c[2] - c[3];
			});
		return w;
	}
	function tree(w) {
		var root = { name: "all", v: 0, kids: new Map(), d: 0, parent: null };
		w.forEach(function (v, s) {
			if (!(v > 0))
				return;
			var n = root;
			root.v += v;
			frames(s).forEach(function (f) {
				var k = n.kids.get(f);
				if (!k) {
					k = { name: f, v: 0, kids: new Map(), d: n.d + 1, parent: n };
					n.kids.set(f, k);
				}
				k.v += v;
				n = k;
			});
		});
		return root;
	}
	function fnv(bytes, h) {
		for (var i = 0; i < bytes.length; i++)
			h = Math.imul(h ^ bytes[i], 16777619) >>> 0;
		return h;
	}
	function colour(name) {
		var b = new TextEncoder().encode(name), h1 = fnv(b, 2166136261);
		var h2 = fnv(b, (h1 ^ 0x5bd1e995) >>> 0);
		var x = (h1 >>> 8) / 16777216, y = (h2 >>> 8) / 16777216;
		return "rgb(" + Math.floor(40 * y) + "," + (160 + Math.floor(75 * x)) + "," +
			(70 + Math.floor(150 * y)) + ")";
	}
	function fit(name, w) {
		var room = Math.floor((w - 6) / CHAR_W), chars = Array.from(name);
		if (room < 3)
			return "";
		return chars.length <= room ? name : chars.slice(0, room - 2).join("") + "..";
	}
	function pathOf(root, names) {
		var n = root, path = [root];
		for (var k = 0; k < names.length; k++) {
			n = n.kids.get(names[k]);
			if (!n)
				return null;
			path.push(n);
		}
		return path;
	}
	function drawFlame() {
		var root = tree(weights()), svg = el("flame"), list = [], maxd = 0;
		var path = pathOf(root, zoomPath);
		if (!path || !path[path.length - 1].v) {
			zoomPath = [];
			path = [root];
		}
		var z = path[path.length - 1];
		path.forEach(function (n) { list.push({ n: n, x: 0, w: AV, parent: n !== z }); });
		function lay(n, x) {
			Array.from(n.kids.values()).sort(function (a, b) { return a.name < b.name ? -1 : a.name > b.name ? 1 : 0; })
				.forEach(function (c) {
					var cw = AV * c.v / z.v;
					if (cw >= 0.1) {
						list.push({ n: c, x: x, w: cw, parent: false });
						lay(c, x);
					}
					x += cw;
				});
		}
		if (z.v > 0)
			lay(z, 0);
		list.forEach(function (f) { if (f.n.d > maxd) maxd = f.n.d; });
		var h = (maxd + 1) * FRAME_H + 8;
		while (svg.firstChild)
			svg.removeChild(svg.firstChild);
		svg.setAttribute("width", W);
		svg.setAttribute("height", h);
		svg.setAttribute("viewBox", "0 0 " + W + " " + h);
		rootNode = root;
		drawn = [];
		if (!root.v) {
			mk("text", { x: 10, y: 20, id: "empty" }, svg, "No samples in this range");
			svg.setAttribute("height", 30);
			svg.setAttribute("viewBox", "0 0 " + W + " 30");
		}
		list.forEach(function (f) {
			var n = f.n, y = h - 4 - (n.d + 1) * FRAME_H, x = 10 + f.x;
			var g = mk("g", { "data-v": n.v, "data-d": n.d, "class": f.parent ? "parent" : "" }, svg);
			var t = n.name + " (" + human(n.v) + ", " + (100 * n.v / root.v).toFixed(2) + "%)";
			mk("title", {}, g, t);
			f.fill = n.d ? colour(n.name) : "rgb(200,200,200)";
			f.rect = mk("rect", { x: x.toFixed(2), y: y, width: f.w.toFixed(2), height: FRAME_H - 1,
					      fill: f.fill, rx: 2, ry: 2 }, g);
			mk("text", { x: (x + 3).toFixed(2), y: y + 11.5 }, g, fit(n.name, f.w));
			f.g = g;
			f.title = t;
			g.addEventListener("click", function () { zoom(n); });
			g.addEventListener("mouseover", function () { el("details").textContent = t; });
			g.addEventListener("mouseout", function () { el("details").textContent = " "; });
			drawn.push(f);
		});
		el("unzoom").classList.toggle("hide", !zoomPath.length);
		el("total").textContent = "Flame graph: " + human(root.v) +
			(D.unit === "bytes" ? " (" + root.v + " bytes) " : " ") +
			(N ? weight + (sel ? " in the selected intervals" : " in the whole run") : D.type);
		search(term);
		mark(marked);
	}
	function zoom(n) {
		var names = [];
		for (; n && n.parent; n = n.parent)
			names.unshift(n.name);
		zoomPath = names;
		drawFlame();
	}
	function search(t) {
		var re = null, sum = 0;
		term = t || "";
		try { re = new RegExp(term); } catch (e) { re = null; }
		var hit = new Set();
		drawn.forEach(function (f) {
			var on = term !== "" && f.n.d > 0 && (re ? re.test(f.n.name) : f.n.name.indexOf(term) >= 0);
			f.rect.setAttribute("fill", on ? "rgb(230,0,230)" : f.fill);
			f.g.classList.toggle("match", on);
			if (on)
				hit.add(f.n);
		});
		hit.forEach(function (n) {
			for (var a = n.parent; a; a = a.parent)
				if (hit.has(a))
					return;
			sum += n.v;
		});
		el("matched").textContent = term === "" ? "" : "Matched: " +
			(rootNode && rootNode.v ? 100 * sum / rootNode.v : 0).toFixed(2) + "% (" + human(sum) + ")";
		return sum;
	}
	function mark(s) {
		marked = s;
		var path = s >= 0 && rootNode ? pathOf(rootNode, frames(s)) : null, on = new Set(path || []);
		drawn.forEach(function (f) { f.g.classList.toggle("mark", on.has(f.n)); });
		Object.keys(areas).forEach(function (k) { areas[k].classList.toggle("mark", Number(k) === s); });
		if (s >= 0)
			el("details").textContent = path ? frames(s).join(" \u2192 ") :
				leaf(s) + ": nothing in the flame graph of this range";
		return path ? path.length - 1 : 0;
	}

	// ---- selection, table, controls ----

	function select(a, b) {
		if (!N)
			return;
		a = Math.max(0, Math.min(a, N - 1));
		b = Math.max(a, Math.min(b, N - 1));
		sel = a === 0 && b === N - 1 ? null : [a, b];
		showSel(sel);
		el("range").textContent = sel ? "Intervals " + (a + 1) + " to " + (b + 1) + " of " + N + " (" +
			secs(startOf(a)) + " to " + secs(D.intervals[b][0]) + ")" :
			"The whole run: " + N + " intervals, " + secs(T);
		drawFlame();
	}
	function suspects() {
		var tb = el("suspects"), head = hmk("tr", tb);
		if (!D.suspects.length) {
			el("suspects-title").textContent = N ? "Leak suspects: none (no stack's bytes rose)" :
				"Leak suspects: none (no intervals)";
			return;
		}
		["#", "suspect", "bytes/interval", "per hour", "grew in", "holds", "gave back", "stack"]
			.forEach(function (t) { hmk("th", head, t); });
		D.suspects.forEach(function (r, k) {
			var tr = hmk("tr", tb), a;
			tr.className = r[1] ? "yes" : "no";
			hmk("td", tr, String(k + 1));
			hmk("td", tr, r[1] ? "yes" : "no");
			hmk("td", tr, (r[2] >= 0 ? "+" : "") + Math.round(r[2]));
			hmk("td", tr, human(Math.round(r[3])) + (r[7] > 0 ? " \u00b1" + Math.round(100 * r[7]) + "%" : ""));
			hmk("td", tr, r[4] + " of " + N);
			hmk("td", tr, human(r[5]));
			hmk("td", tr, human(r[6]));
			a = hmk("a", hmk("td", tr));
			a.parentNode.className = "stack";
			a.href = "#flame";
			a.textContent = leaf(r[0]);
			a.title = frames(r[0]).join(" \u2192 ");
			a.setAttribute("data-sample", r[0]);
			a.addEventListener("click", function (e) {
				e.preventDefault();
				mark(marked === r[0] ? -1 : r[0]);
				el("flame").scrollIntoView({ block: "nearest" });
			});
		});
	}
	function init() {
		var legend = hmk("div", null);
		legend.id = "legend";
		if (N) {
			el("charts").after(legend);
			drawCharts();
			el("summary").textContent = N + " intervals of " + secs(T / N) + " each; " +
				"click or drag on a chart to see the flame graph of those intervals.";
		} else {
			el("note").textContent = "This recording has no intervals (record with -i SECONDS " +
				"--record FILE): the flame graph of the whole run, by " + D.type + ".";
			el("note").classList.remove("hide");
			el("weighing").classList.add("hide");
			el("whole").classList.add("hide");
		}
		el("whole").addEventListener("click", function () { select(0, N - 1); });
		el("weight").addEventListener("change", function () { weight = el("weight").value; drawFlame(); });
		el("search").addEventListener("input", function () { search(el("search").value); });
		el("unzoom").addEventListener("click", function () { zoomPath = []; drawFlame(); });
		suspects();
		if (N)
			select(0, N - 1);
		else
			drawFlame();
		window.memtap = {
			select: select, search: search, mark: mark, zoom: zoom,
			weigh: function (w) { weight = w; el("weight").value = w; drawFlame(); },
			total: function () { return rootNode ? rootNode.v : 0; },
			frames: function () {
				return drawn.map(function (f) {
					return { name: f.n.name, v: f.n.v, d: f.n.d, w: f.w,
						 match: f.g.classList.contains("match"),
						 mark: f.g.classList.contains("mark") };
				});
			},
		};
	}
	window.addEventListener("load", init);
})();
