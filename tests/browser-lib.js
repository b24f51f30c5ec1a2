// browser-lib.js - what the browser tests (tests/*-browser.js) share:
// check() counts failures, launch() starts the headless chromium of
// playwright-core (found in MODULES_DIR, as the .test installed it) with
// a profile of its own, watch() gathers a page's script and console
// errors and its network requests, run() runs main and exits 0 when
// every check passed, else 1.
"use strict";

const path = require("path");
let failures = 0;

function check(ok, what) {
	console.log((ok ? "ok: " : "FAIL: ") + what);
	if (!ok)
		failures++;
}

async function launch(modules, chromiumPath, profileDir, options) {
	const { chromium } = require(path.join(modules, "node_modules", "playwright-core"));
	const context = await chromium.launchPersistentContext(profileDir, Object.assign({
		executablePath: chromiumPath,
		headless: true,
		args: ["--headless", "--no-sandbox", "--disable-gpu",
		       "--disable-background-networking",
		       "--disable-component-update", "--disable-sync",
		       "--no-first-run"],
	}, options || {}));
	return { context, page: context.pages()[0] || await context.newPage() };
}

// What goes wrong in page: script errors and console errors, requests
// for anything but a file.  done() checks that there were none.
function watch(page) {
	const errors = [], requests = [];
	page.on("pageerror", (e) => errors.push(String(e)));
	page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
	page.on("request", (r) => { if (!r.url().startsWith("file:")) requests.push(r.url()); });
	return {
		done() {
			check(requests.length === 0, "no network requests " + requests.join(" "));
			check(errors.length === 0, "no script or console errors " + errors.join("; "));
		},
	};
}

function run(main) {
	main().then(() => {
		console.log(failures ? failures + " failed" : "all passed");
		process.exit(failures ? 1 : 0);
	}, (e) => {
		console.log("FAIL: " + (e && e.stack || e));
		process.exit(1);
	});
}

module.exports = { check, launch, run, watch };
