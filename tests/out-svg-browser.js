// out-svg-browser.js - drive memtap's SVG flame graph in a headless
// chromium (through playwright-core): hover, zoom, reset zoom, search
// (regular expression, nested matches, substring fallback), reset
// search.  Run by tests/out-svg-browser.test:
//
//   node out-svg-browser.js MODULES_DIR CHROMIUM PROFILE_DIR FILE.svg
//
// FILE.svg is `out-golden basic svg`.  Exit 0 on success, 1 on failure.
"use strict";

const path = require("path");
const [modules, chromiumPath, profileDir, svgFile] = process.argv.slice(2);
const { check, launch, run, watch } = require("./browser-lib.js");

// The frame whose name (its title up to " (") is name.
async function frame(page, name) {
	return page.evaluateHandle((n) => {
		for (const g of document.querySelectorAll("#frames > g")) {
			const t = g.querySelector("title").textContent;
			if (t.substring(0, t.lastIndexOf(" (")) === n)
				return g;
		}
		return null;
	}, name);
}

async function geometry(page, name) {
	const g = await frame(page, name);
	return g.evaluate((g) => {
		const r = g.querySelector("rect");
		return { x: r.getAttribute("x"), width: r.getAttribute("width"),
			 display: getComputedStyle(g).display,
			 parent: g.classList.contains("parent"),
			 fill: r.getAttribute("fill"),
			 text: g.querySelector("text").textContent };
	});
}

async function text(page, id) {
	return page.evaluate((id) => {
		const e = document.getElementById(id);
		return { text: e.textContent, display: getComputedStyle(e).display };
	}, id);
}

async function main() {
	const { context, page } = await launch(modules, chromiumPath, profileDir);
	const seen = watch(page);
	let answer = null;
	page.on("dialog", (d) => d.accept(answer));

	await page.goto("file://" + path.resolve(svgFile));
	await page.waitForFunction(() => window.memtap && window.memtap.frames.length > 0);
	check(await page.evaluate(() => window.memtap.frames.length) === 23,
	      "23 frames found by the script");

	// hover: the details line shows the frame's title
	const hr = await frame(page, "handle_request");
	await hr.asElement().hover();
	check((await text(page, "details")).text ===
	      "handle_request (9.03 KiB, 11.10%)", "hover shows the title");

	// zoom on handle_request (offset 200, 9242 bytes of 83270)
	let before = await geometry(page, "handle_request");
	check(before.x === "12.83" && before.width === "130.97",
	      "handle_request at x 12.83, width 130.97 before zoom");
	check((await text(page, "unzoom")).display === "none", "no Reset Zoom before zoom");
	await hr.asElement().click();
	let g = await geometry(page, "handle_request");
	check(g.x === "10.00" && g.width === "1180.00", "zoomed frame fills the width");
	g = await geometry(page, "std::vector<int, std::allocator<int> >::push_back(int const&)");
	// (8242 / 9242) * 1180 = 1052.322..., at 10 + (1000 / 9242) * 1180
	check(g.width === "1052.32" && g.x === "137.68",
	      "child laid out again: x 137.68, width 1052.32 (got " + g.x + ", " + g.width + ")");
	check(g.text === "std::vector<int, std::allocator<int> >::push_back(int const&)",
	      "child shows its whole name");
	g = await geometry(page, "inline_a");
	check(g.width === "127.68" && g.x === "10.00", "inline_a: x 10.00, width 127.68");
	g = await geometry(page, "main");
	check(g.parent && g.width === "1180.00" && g.display !== "none",
	      "ancestor main spans the width, faded");
	g = await geometry(page, "[mmap]");
	check(g.display === "none", "[mmap] (outside the zoom) hidden");
	g = await geometry(page, "odd_name?\ufffd");
	check(g.display === "none", "sibling odd_name hidden");
	check((await text(page, "unzoom")).display !== "none", "Reset Zoom shown");

	// reset zoom
	await page.click("#unzoom");
	g = await geometry(page, "handle_request");
	check(g.x === "12.83" && g.width === "130.97" && !g.parent,
	      "Reset Zoom: handle_request back at x 12.83, width 130.97");
	g = await geometry(page, "[mmap]");
	check(g.display !== "none" && g.width === "928.70", "Reset Zoom: [mmap] shown again");
	check((await text(page, "unzoom")).display === "none", "Reset Zoom hidden again");

	// search: a regular expression, nested matches counted once
	// main (9542) contains handle_request: 9542 + 65536 = 75078 = 90.16%
	answer = "^(main|handle_request)$";
	await page.click("#search");
	let m = await text(page, "matched");
	check(m.display !== "none" && m.text === "Matched: 90.16% (73.32 KiB)",
	      "search " + answer + ": " + m.text);
	g = await geometry(page, "handle_request");
	check(g.fill === "rgb(230,0,230)", "matched frame highlighted");
	g = await geometry(page, "server");
	check(g.fill !== "rgb(230,0,230)", "other frames not highlighted");

	answer = "^inline_";
	await page.click("#search");
	m = await text(page, "matched");
	check(m.text === "Matched: 1.20% (1000 bytes)", "search " + answer + ": " + m.text);

	// not a valid regular expression: a substring
	answer = "push_back(";
	await page.click("#search");
	m = await text(page, "matched");
	check(m.text === "Matched: 9.90% (8.05 KiB)", "search " + answer + ": " + m.text);

	// the root never matches; frames with markup characters do
	answer = "<tagged>";
	await page.click("#search");
	m = await text(page, "matched");
	check(m.text === "Matched: 78.70% (64.00 KiB)", "search " + answer + ": " + m.text);

	// search while zoomed: shares stay shares of the total
	await (await frame(page, "handle_request")).asElement().click();
	answer = "malloc$";
	await page.click("#search");
	m = await text(page, "matched");
	check(m.text === "Matched: 11.46% (9.32 KiB)", "search " + answer + ": " + m.text);

	await page.click("#unsearch");
	check((await text(page, "matched")).display === "none", "Reset Search hides the share");
	g = await geometry(page, "inline_a");
	check(g.fill !== "rgb(230,0,230)", "Reset Search restores colours");

	seen.done();
	await context.close();
}

run(main);
