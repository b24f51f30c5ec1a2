// html-timeline-browser.js - drive memtap's timeline page (memtap report
// -F html) in a headless chromium (through playwright-core).  Run by
// tests/html-timeline-browser.test:
//
//   node html-timeline-browser.js MODULES_DIR CHROMIUM PROFILE_DIR REC.json PAGE.html PNG
//
// REC.json is the recording PAGE.html was written from: every total the
// page shows is checked against sums over REC.json's intervals made
// here.  PNG: a screenshot of the page after selecting a range and
// marking a suspect.  Exit 0 on success, 1 on failure.
"use strict";

const fs = require("fs");
const path = require("path");
const [modules, chromiumPath, profileDir, recFile, pageFile, png] = process.argv.slice(2);
const { check, launch, run, watch } = require("./browser-lib.js");

const text = fs.readFileSync(recFile, "utf8");
const ivs = JSON.parse(text).intervals;
const R = require("./recording.js").read(text);
// acquired bytes of intervals a..b (0-based, inclusive)
function acquired(a, b) {
	return R.total(a, b, "acquired");
}

// x in the page of time t (ns) on the chart whose box is box
function chartX(box, t) {
	const W = 1200, PAD_L = 80, PAD_R = 20, T = ivs[ivs.length - 1].end_nanos;
	return box.x + (PAD_L + (W - PAD_L - PAD_R) * t / T) * box.width / W;
}

async function main() {
	const { context, page } = await launch(modules, chromiumPath, profileDir, { viewport: { width: 1280, height: 1400 } });
	const seen = watch(page);

	await page.goto("file://" + path.resolve(pageFile));
	await page.waitForFunction(() => window.memtap && window.memtap.frames().length > 0);

	// drawn: the charts' series and areas, the flame graph
	const dom = await page.evaluate(() => ({
		lines: document.querySelectorAll("#memory polyline.series").length,
		areas: document.querySelectorAll("#stacks polygon.area").length,
		frames: document.querySelectorAll("#flame g").length,
		rows: document.querySelectorAll("#suspects tr").length,
		pwned: window.pwned,
	}));
	check(dom.lines === 3, "3 series on the memory chart (" + dom.lines + ")");
	check(dom.areas >= 2, "stacked areas drawn (" + dom.areas + ")");
	check(dom.frames > 5, "flame graph drawn (" + dom.frames + " frames)");
	check(dom.pwned === undefined, "no markup from a function name ran");

	// the whole run: the sum of every interval's acquired bytes
	const whole = acquired(0, ivs.length - 1);
	let total = await page.evaluate(() => window.memtap.total());
	check(total === whole, "whole run: " + total + " bytes, the recording's " + whole);
	check((await page.textContent("#total")).includes("(" + whole + " bytes)"),
	      "the total shown: " + await page.textContent("#total"));

	// drag on the memory chart from interval 3 to interval 4
	const box = await page.locator("#memory").boundingBox();
	const y = box.y + box.height / 2;
	const x3 = chartX(box, (ivs[1].end_nanos + ivs[2].end_nanos) / 2);
	const x4 = chartX(box, (ivs[2].end_nanos + ivs[3].end_nanos) / 2);
	await page.mouse.move(x3, y);
	await page.mouse.down();
	await page.mouse.move((x3 + x4) / 2, y);
	await page.mouse.move(x4, y);
	await page.mouse.up();
	total = await page.evaluate(() => window.memtap.total());
	check(total === acquired(2, 3), "intervals 3 to 4 dragged: " + total + " bytes, the recording's " +
	      acquired(2, 3));
	check(total !== whole, "the flame graph changed with the range");
	check((await page.textContent("#range")).startsWith("Intervals 3 to 4 of " + ivs.length),
	      "range: " + await page.textContent("#range"));
	check(await page.evaluate(() => !document.querySelector("#stacks .sel").classList.contains("hide")),
	      "the range shown on the stacks chart");

	// a click: one interval
	const x2 = chartX(await page.locator("#stacks").boundingBox(), (ivs[0].end_nanos + ivs[1].end_nanos) / 2);
	await page.mouse.click(x2, (await page.locator("#stacks").boundingBox()).y + 100);
	total = await page.evaluate(() => window.memtap.total());
	check(total === acquired(1, 1), "interval 2 clicked: " + total + " bytes, the recording's " +
	      acquired(1, 1));

	// released and net weigh the same intervals
	await page.selectOption("#weight", "net");
	const net = R.total(1, 1, "net");
	total = await page.evaluate(() => window.memtap.total());
	check(total === net, "net of interval 2: " + total + " bytes, the recording's " + net);
	await page.selectOption("#weight", "acquired");

	// whole run again
	await page.click("#whole");
	check(await page.evaluate(() => window.memtap.total()) === whole, "Whole run: back to the total");

	// search highlights frames
	await page.fill("#search", "^inline_");
	let fr = await page.evaluate(() => window.memtap.frames());
	const hits = fr.filter((f) => f.match).map((f) => f.name);
	check(hits.length > 0 && hits.every((n) => /^inline_/.test(n)),
	      "search ^inline_ highlights " + hits.join(", "));
	check(await page.evaluate(() => document.querySelector("#flame g.match rect").getAttribute("fill")) ===
	      "rgb(230,0,230)", "a match is drawn in magenta");
	check(/^Matched: [0-9.]+% \(/.test(await page.textContent("#matched")),
	      "matched share: " + await page.textContent("#matched"));
	await page.fill("#search", "");
	fr = await page.evaluate(() => window.memtap.frames());
	check(!fr.some((f) => f.match), "search cleared");

	// a suspect's link marks its stack
	const link = page.locator("#suspects a").first();
	const leafName = await link.textContent();
	await link.click();
	fr = await page.evaluate(() => window.memtap.frames());
	const marked = fr.filter((f) => f.mark);
	check(marked.length > 1 && marked.some((f) => leafName.endsWith(f.name)),
	      "suspect " + leafName + " marks " + marked.length + " frames");
	check(await page.evaluate(() => document.querySelectorAll("#stacks polygon.area.mark").length) === 1,
	      "and its area");

	// hostile names are text
	const names = fr.map((f) => f.name);
	check(names.includes("</script><img src=x onerror=window.pwned=1>&amp\"q'"),
	      "a hostile function name shown as text");
	check(names.includes("parse \"quoted\" & <tagged>"), "quotes and markup characters as text");

	// zoom on a frame, then reset
	await page.evaluate(() => {
		for (const g of document.querySelectorAll("#flame g"))
			if (g.querySelector("title").textContent.startsWith("handle_request ("))
				g.dispatchEvent(new MouseEvent("click"));
	});
	fr = await page.evaluate(() => window.memtap.frames());
	const hr = fr.find((f) => f.name === "handle_request");
	check(hr && Math.abs(hr.w - 1180) < 0.01, "zoomed frame fills the width");
	await page.click("#unzoom");

	// the screenshot, with a range and a suspect marked
	await page.mouse.move(x3, y);
	await page.mouse.down();
	await page.mouse.move(x4, y);
	await page.mouse.up();
	await page.screenshot({ path: png, fullPage: true });

	seen.done();
	await context.close();
}

run(main);
