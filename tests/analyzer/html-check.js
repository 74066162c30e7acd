// Opens an HTML report in headless Chromium over the DevTools protocol (on a pipe, so no port and no
// WebSocket library) with the network blocked, and prints one JSON object: how long the page took
// to load and to draw, every console message, uncaught exception and network request, the page's
// width, and every element that carries data-* attributes (what the test compares with the JSON
// report). Optionally saves a full-page screenshot and a PDF (print).
//
//   node html-check.js CHROMIUM PAGE.html [--screenshot OUT.png [--clip Y,HEIGHT]] [--pdf OUT.pdf]
//                      [--width PX] [--media print]
'use strict';
const { spawn } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const args = process.argv.slice(2);
if (args.length < 2) {
	console.error('usage: node html-check.js CHROMIUM PAGE.html [--screenshot OUT.png] [--pdf OUT.pdf] [--width PX]');
	process.exit(2);
}
const [chromium, page] = args;
const opt = (name) => { const i = args.indexOf(name); return i > 0 ? args[i + 1] : null; };
const width = parseInt(opt('--width') || '1280', 10);
const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'gpt-html-check-'));
const url = 'file://' + path.resolve(page);

const browser = spawn(chromium, [
	'--headless', '--disable-gpu', '--no-sandbox', '--remote-debugging-pipe', '--no-first-run',
	'--no-default-browser-check', '--disable-extensions', '--disable-background-networking',
	'--disable-component-update', '--disable-sync', '--disable-default-apps', '--mute-audio',
	'--host-resolver-rules=MAP * ~NOTFOUND', '--proxy-server=127.0.0.1:9', '--user-data-dir=' + profile,
	`--window-size=${width},900`, 'about:blank',
], { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
let stderr = '';
browser.stderr.on('data', (d) => { stderr += d; });

let nextId = 1, buffer = '';
const pending = new Map(), listeners = [];
const toBrowser = browser.stdio[3], fromBrowser = browser.stdio[4];
fromBrowser.on('data', (chunk) => {
	buffer += chunk.toString('utf8');
	let end;
	while ((end = buffer.indexOf('\0')) >= 0) {
		const msg = JSON.parse(buffer.slice(0, end));
		buffer = buffer.slice(end + 1);
		if (msg.id && pending.has(msg.id)) {
			const { resolve, reject, method } = pending.get(msg.id);
			pending.delete(msg.id);
			if (msg.error) reject(new Error(method + ': ' + msg.error.message)); else resolve(msg.result);
		} else if (msg.method) {
			for (const l of listeners) l(msg);
		}
	}
});
function send(method, params = {}, sessionId) {
	const id = nextId++;
	const msg = { id, method, params };
	if (sessionId) msg.sessionId = sessionId;
	toBrowser.write(JSON.stringify(msg) + '\0');
	return new Promise((resolve, reject) => pending.set(id, { resolve, reject, method }));
}
function waitFor(method, sessionId, ms) {
	return new Promise((resolve, reject) => {
		const timer = setTimeout(() => reject(new Error('timed out waiting for ' + method)), ms);
		listeners.push((msg) => {
			if (msg.method === method && msg.sessionId === sessionId) { clearTimeout(timer); resolve(msg.params); }
		});
	});
}
const exited = new Promise((resolve) => browser.on('exit', resolve));
function removeProfile() {
	try { fs.rmSync(profile, { recursive: true, force: true }); } catch (_) { /* chromium still writing */ }
}
function fail(e) {
	console.error('html-check: ' + (e && e.message ? e.message : e));
	if (stderr) console.error(stderr.split('\n').filter((l) => !/dbus|bus\.cc/.test(l)).slice(-20).join('\n'));
	try { browser.kill('SIGKILL'); } catch (_) { /* gone already */ }
	removeProfile();
	process.exit(1);
}
browser.on('error', fail);
setTimeout(() => fail(new Error('no answer from chromium in 60 s')), 60000).unref();

const COLLECT = `(() => {
	const els = [];
	for (const e of document.querySelectorAll('*')) {
		const data = {};
		for (const a of e.attributes)
			if (a.name.startsWith('data-')) data[a.name.slice(5)] = a.value;
		if (!Object.keys(data).length) continue;
		const r = e.getBoundingClientRect();
		els.push({ tag: e.tagName.toLowerCase(), cls: e.getAttribute('class') || '', id: e.id || '',
			data, x: r.left, w: r.width, h: r.height,
			text: e.tagName.toLowerCase() === 'tr' || e.tagName === 'ARTICLE' ? e.textContent.slice(0, 400) : '' });
	}
	const svgs = [...document.querySelectorAll('svg')].map((s) => {
		const r = s.getBoundingClientRect();
		return { cls: s.getAttribute('class') || '', x: r.left, w: r.width, h: r.height, shapes: s.querySelectorAll('rect').length,
			titles: s.querySelectorAll('title').length };
	});
	return JSON.stringify({ els, svgs, title: document.title, scrollWidth: document.documentElement.scrollWidth,
		innerWidth: window.innerWidth, height: document.documentElement.scrollHeight,
		sections: [...document.querySelectorAll('section')].map((s) => s.id),
		src_lines: [...document.querySelectorAll('li.src')].map((e) => e.textContent),
		scripts: document.querySelectorAll('script').length,
		external: [...document.querySelectorAll('[src],[href]')].map((e) => e.getAttribute('src') || e.getAttribute('href'))
			.filter((u) => !u.startsWith('#')) });
})()`;

(async () => {
	const console_ = [], exceptions = [], requests = [], logs = [];
	const { targetId } = await send('Target.createTarget', { url: 'about:blank' });
	const { sessionId } = await send('Target.attachToTarget', { targetId, flatten: true });
	listeners.push((msg) => {
		if (msg.sessionId !== sessionId) return;
		if (msg.method === 'Runtime.consoleAPICalled')
			console_.push({ type: msg.params.type, text: msg.params.args.map((a) => a.value ?? a.description).join(' ') });
		else if (msg.method === 'Runtime.exceptionThrown')
			exceptions.push(msg.params.exceptionDetails.text + ' ' + (msg.params.exceptionDetails.exception || {}).description);
		else if (msg.method === 'Log.entryAdded')
			logs.push({ level: msg.params.entry.level, source: msg.params.entry.source, text: msg.params.entry.text });
		else if (msg.method === 'Network.requestWillBeSent')
			requests.push(msg.params.request.url);
	});
	for (const m of ['Runtime.enable', 'Log.enable', 'Network.enable', 'Page.enable'])
		await send(m, {}, sessionId);
	await send('Emulation.setDeviceMetricsOverride', { width, height: 900, deviceScaleFactor: 1, mobile: false }, sessionId);
	if (opt('--media'))
		await send('Emulation.setEmulatedMedia', { media: opt('--media') }, sessionId);
	const loaded = waitFor('Page.loadEventFired', sessionId, 30000);
	const t0 = process.hrtime.bigint();
	await send('Page.navigate', { url }, sessionId);
	await loaded;
	const t1 = process.hrtime.bigint();
	// a frame drawn after layout: the page is on screen
	await send('Runtime.evaluate', { expression: 'new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))',
		awaitPromise: true }, sessionId);
	const t2 = process.hrtime.bigint();
	const res = await send('Runtime.evaluate', { expression: COLLECT, returnByValue: true }, sessionId);
	if (res.exceptionDetails) throw new Error('collecting the page: ' + res.exceptionDetails.text);
	const out = JSON.parse(res.result.value);
	out.load_ms = Number(t1 - t0) / 1e6;
	out.drawn_ms = Number(t2 - t0) / 1e6;
	out.console = console_;
	out.exceptions = exceptions;
	out.logs = logs;
	out.requests = requests.filter((u) => u !== url);
	out.bytes = fs.statSync(page).size;
	const shot = opt('--screenshot');
	if (shot) {
		const [y, h] = (opt('--clip') || '0,' + out.height).split(',').map(Number);
		const png = await send('Page.captureScreenshot', { format: 'png', captureBeyondViewport: true,
			clip: { x: 0, y, width, height: Math.min(h, out.height - y, 16000), scale: 1 } }, sessionId);
		fs.writeFileSync(shot, Buffer.from(png.data, 'base64'));
	}
	const pdf = opt('--pdf');
	if (pdf) {
		const r = await send('Page.printToPDF', { printBackground: true, preferCSSPageSize: false }, sessionId);
		fs.writeFileSync(pdf, Buffer.from(r.data, 'base64'));
	}
	await send('Browser.close').catch(() => {});
	await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
	removeProfile();
	// exit only once the output is written: on a pipe, stdout is asynchronous
	process.stdout.write(JSON.stringify(out) + '\n', () => process.exit(0));
})().catch(fail);
