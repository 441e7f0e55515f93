// The memory dashboard: plain JavaScript over the REST API it is served
// beside. Everything the API returns is put on the page as text, never as
// HTML: memories are written by chat traffic, that is, by anyone.
'use strict';

const mode = document.documentElement.dataset.mode === 'self' ? 'self' : 'admin';
// The API's root is the page's folder's parent: /memory/ui/ -> /memory/.
// Built from the path alone, never from a URL that may carry credentials.
const base = location.pathname.replace(/ui\/[^/]*$/, '');
const keyName = 'memory.api_key';
// The server says whether the one who opened the page is the person at
// this machine, known without a key ({memory.local_user}).
const local = document.documentElement.dataset.local === 'true';
const $ = (sel) => document.querySelector(sel);

const state = {
	owner: '',        // admin: the owner id picked; '' is every owner
	cursor: '',       // where the listing continues
	memories: [],
	editing: 0,       // the memory whose content is being edited
	purging: 0,       // the memory whose purge awaits confirmation
	profile: null,    // GET profile's answer
	others: [],       // memories neither in the profile nor transcripts
	editingFact: 0,   // the fact being corrected in the profile or the others
	sessions: new Map(), // session id -> GET sessions' entry, to name it by
	keyless: false,   // self: the API knows the caller without a key
};

// --- talking to the API -------------------------------------------------

class APIError extends Error {
	constructor(message, status, code) {
		super(message);
		this.status = status;
		this.code = code;
	}
}

// api sends one request. The answer's JSON is returned; an error answer is
// thrown as an APIError carrying the API's own message.
async function api(method, path, body, raw) {
	const headers = {};
	if (mode === 'self' && sessionStorage.getItem(keyName)) {
		headers.Authorization = 'Bearer ' + sessionStorage.getItem(keyName);
	}
	let payload;
	if (body instanceof Blob) {
		// The only file the page sends is an import: JSON lines. The API
		// refuses the types a foreign page's form could send.
		payload = body;
		headers['Content-Type'] = 'application/x-ndjson';
	} else if (body !== undefined) {
		payload = JSON.stringify(body);
		headers['Content-Type'] = 'application/json';
	}
	let res;
	try {
		res = await fetch(base + path, { method, headers, body: payload, credentials: 'same-origin', cache: 'no-store' });
	} catch (e) {
		throw new APIError('The memory API could not be reached (' + e.message + '). Is Caddy running?', 0, 'network');
	}
	if (raw && res.ok) return res;
	const text = await res.text();
	let data = null;
	try { data = text ? JSON.parse(text) : null; } catch (e) { /* not JSON */ }
	if (!res.ok) {
		const err = data && data.error;
		const msg = err && err.message ? err.message : res.status + ' ' + res.statusText + (text ? ': ' + text.slice(0, 300) : '');
		throw new APIError(msg, res.status, err && err.code);
	}
	return data;
}

// ownerQuery names the picked owner in a query string (admin mode).
function ownerQuery(prefix) {
	return mode === 'admin' && state.owner ? prefix + 'owner_id=' + encodeURIComponent(state.owner) : '';
}

function ownerBody(body) {
	if (mode === 'admin' && state.owner) body.owner_id = state.owner;
	return body;
}

// --- page helpers -------------------------------------------------------

// el makes an element. Its text children go through visible: every text on
// the page that the API returns passes through here.
function el(tag, attrs, ...children) {
	const e = document.createElement(tag);
	for (const [k, v] of Object.entries(attrs || {})) {
		if (v === undefined || v === null || v === false) continue;
		if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
		else if (k === 'class') e.className = v;
		else if (k === 'style') e.style.cssText = v; // CSSOM: allowed by the page's CSP, unlike the attribute
		else e.setAttribute(k, v === true ? '' : v);
	}
	for (const c of children.flat()) {
		if (c === undefined || c === null || c === false) continue;
		if (c instanceof Node) e.append(c); else e.append(...visible(String(c)));
	}
	return e;
}

// Characters that show nothing themselves or change how the text around
// them shows: bidi controls (U+202E shows "evil.exe" as "exe.live"),
// zero-width and other format characters (tags among them, which can hide
// a whole sentence from the eye but not from a model), control characters,
// fillers, variation selectors, line and paragraph separators.
const hiddenChar = /[\p{Cf}\p{Cc}\u034F\u115F\u1160\u2028\u2029\u3164\uFE00-\uFE0F\uFFA0\u{E0100}-\u{E01EF}]/u;
const hiddenChars = new RegExp(hiddenChar.source, 'gu');
// What a joiner joins in ordinary text: letters and their marks (ZWNJ in
// Persian, ZWJ in Indic scripts) and emoji (family and profession sequences).
const joins = /[\p{L}\p{M}\p{Extended_Pictographic}\p{Emoji_Modifier}]/u;

// visible returns s as text and marked tokens (<U+202E>) for the
// characters above that do not do their ordinary job where they stand:
// memories come from anyone's chats, and the operator must see what the
// model will be given.
function visible(s) {
	if (!hiddenChar.test(s)) return [s];
	const out = [];
	let last = 0;
	for (const m of s.matchAll(hiddenChars)) {
		const ch = m[0], i = m.index;
		const before = [...s.slice(Math.max(0, i - 2), i)].pop() || '';
		const after = [...s.slice(i + ch.length, i + ch.length + 2)][0] || '';
		const ordinary = ch === '\t' || ch === '\n' || ch === '\r' ||
			((ch === '\u200C' || ch === '\u200D') && joins.test(before) && joins.test(after)) ||
			((ch === '\uFE0E' || ch === '\uFE0F') && before !== '' && !hiddenChar.test(before)); // text or emoji style of what precedes
		if (ordinary) continue;
		if (i > last) out.push(s.slice(last, i));
		const code = 'U+' + ch.codePointAt(0).toString(16).toUpperCase().padStart(4, '0');
		const token = document.createElement('span');
		token.className = 'hidden-char';
		token.title = 'An invisible character, ' + code + ', is here in the text';
		token.textContent = '<' + code + '>';
		out.push(token);
		last = i + ch.length;
	}
	if (last < s.length) out.push(s.slice(last));
	return out;
}

function button(label, onclick, cls, extra) {
	return el('button', Object.assign({ type: 'button', class: cls || 'quiet', onclick }, extra || {}), label);
}

function when(s) {
	if (!s) return '';
	const d = new Date(s);
	if (isNaN(d)) return s;
	return d.toISOString().slice(0, 16).replace('T', ' ');
}

const dayFormat = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short', year: 'numeric' });
const timeFormat = new Intl.DateTimeFormat(undefined, { weekday: 'short', day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit' });
const shortTimeFormat = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit' });

// day is a time as a person reads a date: 3 May 2026.
function day(s) {
	const d = new Date(s);
	return s && !isNaN(d) ? dayFormat.format(d) : '';
}

// sessionName names a conversation by when it began and its first words,
// not by its id (c-531c633c..., a fingerprint): '' when unknown. short
// is for a table's cell.
function sessionName(id, short) {
	const s = state.sessions.get(id);
	if (!s) return '';
	const d = new Date(s.first);
	const words = !short || s.first_words.length <= 28 ? s.first_words : s.first_words.slice(0, 26).replace(/\s+\S*$/, '') + '…';
	return (isNaN(d) ? '' : (short ? shortTimeFormat : timeFormat).format(d) + ' · ') + '“' + words + '”';
}

function showError(err) {
	const box = $('#error');
	box.replaceChildren(...visible(err instanceof Error ? err.message : String(err)));
	box.hidden = false;
	if (err && err.status === 401 && mode === 'self') {
		if (!sessionStorage.getItem(keyName)) state.keyless = false;
		signOut();
	}
}

function clearError() { $('#error').hidden = true; }

// notify says what happened; action, if given, is a [label, fn] button
// beside it (Undo).
function notify(msg, action) {
	const box = $('#notice');
	box.replaceChildren(...visible(msg));
	if (action) box.append(' ', button(action[0], () => guarded(action[1]), 'quiet'));
	box.hidden = false;
}

// guarded runs an action, showing the API's message if it fails.
async function guarded(fn) {
	clearError();
	try {
		await fn();
	} catch (e) {
		showError(e);
	}
}

// --- hash: #owner=<id>&memory=<id> --------------------------------------

function hashParams() { return new URLSearchParams(location.hash.slice(1)); }

function setHash(changes) {
	const p = hashParams();
	for (const [k, v] of Object.entries(changes)) {
		if (v) p.set(k, v); else p.delete(k);
	}
	const h = p.toString();
	if (('#' + h) !== location.hash && (h || location.hash)) location.hash = h;
	else route();
}

async function route() {
	const p = hashParams();
	if (mode === 'admin') {
		const owner = p.get('owner') || '';
		if (owner !== state.owner) {
			state.owner = owner;
			markOwner();
			await Promise.all([guarded(loadMemories), guarded(loadStats), guarded(loadRecent), loadPerson()]);
			updateForget();
		}
	}
	const id = p.get('memory');
	if (id) await guarded(() => openMemory(id)); else $('#detail').hidden = true;
}

// --- health -------------------------------------------------------------

async function checkHealth() {
	const box = $('#health');
	const t0 = performance.now();
	try {
		const h = await api('GET', 'health');
		const rtt = performance.now() - t0;
		box.className = 'health ok';
		$('#health-text').textContent = 'healthy · store ' + h.store_latency_ms.toFixed(1) + ' ms · index ' +
			h.index_latency_ms.toFixed(1) + ' ms · round trip ' + rtt.toFixed(0) + ' ms';
	} catch (e) {
		box.className = 'health bad';
		$('#health-text').textContent = 'unhealthy: ' + e.message;
	}
}

// --- owners (admin) -----------------------------------------------------

async function loadOwners() {
	const data = await api('GET', 'stats/owners');
	const tbody = $('#owners-table tbody');
	tbody.replaceChildren();
	for (const o of data.owners) {
		const kinds = Object.entries(o.by_kind).sort().map(([k, n]) => el('span', { class: 'tag' }, k + ' ' + n));
		tbody.append(el('tr', { 'data-owner': o.owner_id, class: o.owner_id === state.owner ? 'selected' : '' },
			el('td', { class: 'mono', 'data-label': 'Owner' }, o.owner_id),
			el('td', { class: 'num', 'data-label': 'Active' }, o.active),
			el('td', { class: 'num', 'data-label': 'Deleted' }, o.deleted),
			el('td', { 'data-label': 'Kinds' }, kinds),
			el('td', { 'data-label': 'Last activity' }, when(o.last_activity)),
			el('td', { class: 'actions' }, button('Open', () => setHash({ owner: o.owner_id, memory: '' }), 'quiet', { 'aria-label': 'Open owner ' + o.owner_id }))));
	}
	$('#owners-empty').hidden = data.owners.length > 0;
	markOwner();
}

// findOwner opens the owner a raw value (an API key, a user id) names.
async function findOwner(ev) {
	ev.preventDefault();
	const raw = $('#find-owner').value;
	const data = await api('GET', 'stats/owners?owner=' + encodeURIComponent(raw));
	$('#find-owner').value = '';
	if (data.owners.length === 0) {
		notify('No memories are kept for that key or user.');
		return;
	}
	setHash({ owner: data.owners[0].owner_id, memory: '' });
}

// --- recent requests ------------------------------------------------------

async function loadRecent() {
	const box = $('#recent');
	box.hidden = mode === 'admin' && !state.owner;
	if (box.hidden) return;
	const data = await api('GET', 'injections' + ownerQuery('?'));
	const tbody = $('#recent-table tbody');
	tbody.replaceChildren(...data.injections.map((r) => el('tr', {},
		el('td', { 'data-label': 'Time' }, when(r.time)),
		el('td', { 'data-label': 'Outcome' }, r.outcome),
		el('td', { 'data-label': 'Memories injected' }, ...r.memory_ids.map((id) =>
			el('a', { href: '#' + new URLSearchParams(Object.assign(state.owner ? { owner: state.owner } : {}, { memory: String(id) })).toString(), class: 'mono' }, String(id) + ' ')),
			r.injected > r.memory_ids.length ? '(' + (r.injected - r.memory_ids.length) + ' more)' : ''),
		el('td', { class: 'num', 'data-label': 'Tokens' }, r.tokens),
		el('td', { class: 'num', 'data-label': 'Search' }, r.search_ms.toFixed(2) + ' ms'))));
	$('#recent-empty').hidden = data.injections.length > 0;
}

function markOwner() {
	for (const tr of document.querySelectorAll('#owners-table tbody tr')) {
		tr.classList.toggle('selected', tr.dataset.owner === state.owner);
	}
	const scope = $('#scope');
	scope.replaceChildren();
	if (mode === 'self') {
		scope.append('Every memory of yours, to search, filter, pin, restore or purge; transcripts too when “Show transcripts” is ticked.');
	} else if (state.owner) {
		scope.append('Owner ', el('span', { class: 'mono' }, state.owner), ' ', button('All owners', () => setHash({ owner: '', memory: '' })));
	} else {
		scope.append('Every owner. Pick an owner above to search, preview or export theirs.');
	}
	const needOwner = mode === 'admin' && !state.owner;
	$('#q').disabled = needOwner;
	$('#q').placeholder = needOwner ? 'Pick an owner to search' : 'Search memories';
	$('#add-owner-row').hidden = mode === 'self' || !!state.owner;
	$('#preview-form button').disabled = needOwner;
}

// --- memories -----------------------------------------------------------

function listQuery() {
	const p = new URLSearchParams();
	const q = $('#q').value.trim();
	if (q && !$('#q').disabled) p.set('q', q);
	for (const [id, name] of [['#f-kind', 'kind'], ['#f-source', 'source'], ['#f-session', 'session']]) {
		const v = $(id).value.trim();
		if (v) p.set(name, v);
	}
	if ($('#f-deleted').checked) p.set('include_deleted', 'true');
	if (!$('#f-turns').checked && $('#f-kind').value !== 'turn') p.set('exclude_kind', 'turn');
	if (mode === 'admin' && state.owner) p.set('owner_id', state.owner);
	return p;
}

// listings counts the memory listings asked for: a search typed while an
// earlier listing is on its way must not be overwritten by that listing.
let listings = 0;

async function loadMemories(more) {
	const p = listQuery();
	if (more && state.cursor) p.set('cursor', state.cursor);
	const mine = ++listings;
	const data = await api('GET', 'memories?' + p.toString());
	if (mine !== listings) return; // a newer listing is on its way
	state.memories = more ? state.memories.concat(data.memories) : data.memories;
	state.cursor = data.next_cursor || '';
	renderMemories();
	fillKinds(data.stats && data.stats.by_kind);
}

function fillKinds(byKind) {
	const sel = $('#f-kind');
	const have = new Set([...sel.options].map((o) => o.value));
	for (const k of Object.keys(byKind || {}).sort()) {
		if (!have.has(k)) sel.append(el('option', {}, k));
	}
}

function renderMemories() {
	const tbody = $('#memories-table tbody');
	tbody.replaceChildren(...state.memories.map(memoryRow));
	const searching = $('#q').value.trim() && !$('#q').disabled;
	$('#memories-empty').textContent = searching && $('#f-deleted').checked
		? 'No memories match. The search finds active memories only: clear it to see deleted ones.'
		: 'No memories match.';
	$('#memories-empty').hidden = state.memories.length > 0;
	$('#more').hidden = !state.cursor;
}

function memoryRow(m) {
	const deleted = !!m.deleted_at;
	const cid = 'content-' + m.id;
	let content;
	if (state.editing === m.id) {
		const ta = el('textarea', { id: 'edit-' + m.id, rows: 3, 'aria-label': 'New content of memory ' + m.id });
		ta.value = m.content;
		content = el('td', { class: 'content', id: cid, 'data-label': 'Content' }, ta,
			button('Save', () => guarded(() => saveEdit(m.id)), '', { 'aria-describedby': cid }),
			' ', button('Cancel', () => { state.editing = 0; renderMemories(); }));
		setTimeout(() => ta.focus(), 0);
	} else {
		content = el('td', { class: 'content', id: cid, 'data-label': 'Content' }, m.content,
			m.pinned ? el('span', { class: 'tag pin' }, ' pinned') : null,
			deleted ? el('span', { class: 'tag' }, ' deleted' + (m.delete_reason ? ' (' + m.delete_reason + ')' : '')) : null,
			mode === 'admin' && !state.owner ? el('div', { class: 'mono' }, 'owner ' + m.owner) : null);
	}
	const actions = el('td', { class: 'actions' });
	const d = { 'aria-describedby': cid };
	if (deleted) {
		actions.append(button('Restore', () => guarded(() => change(m.id, { deleted: false }, 'Restored memory ' + m.id + '.')), 'quiet', d));
		if (state.purging === m.id) {
			actions.append(button('Confirm purge', () => guarded(() => purge(m.id)), 'quiet danger', d),
				button('Keep', () => { state.purging = 0; renderMemories(); }, 'quiet', d));
		} else {
			actions.append(button('Purge', () => { state.purging = m.id; renderMemories(); }, 'quiet danger', d));
		}
	} else {
		actions.append(
			button('Edit', () => { state.editing = m.id; renderMemories(); }, 'quiet', d),
			button(m.pinned ? 'Unpin' : 'Pin', () => guarded(() => change(m.id, { pinned: !m.pinned }, (m.pinned ? 'Unpinned' : 'Pinned') + ' memory ' + m.id + '.')), 'quiet', d),
			button('Delete', () => guarded(() => remove(m.id)), 'quiet danger', d));
	}
	actions.append(button('History', () => setHash({ memory: String(m.id) }), 'quiet', d));
	return el('tr', { 'data-id': m.id, class: deleted ? 'deleted' : '' }, content,
		el('td', { 'data-label': 'Kind' }, m.kind),
		el('td', { 'data-label': 'Source' }, m.source || ''),
		sessionName(m.session) ? el('td', { class: 'session', 'data-label': 'Session', title: m.session }, sessionName(m.session, true))
			: el('td', { class: 'mono', 'data-label': 'Session' }, m.session || ''),
		el('td', { 'data-label': 'Created' }, when(m.created_at)),
		el('td', { 'data-label': 'Updated' }, when(m.updated_at)),
		el('td', { class: 'num', 'data-label': 'Mentions' }, m.mentions),
		el('td', { class: 'num version', 'data-label': 'Version' }, m.version),
		actions);
}

// replace puts an answered memory in the table in place.
function replace(m) {
	state.memories = state.memories.map((x) => (x.id === m.id ? m : x));
	renderMemories();
}

async function saveEdit(id) {
	const content = $('#edit-' + id).value;
	const data = await api('PATCH', 'memories/' + id, { content });
	state.editing = 0;
	replace(data.memory);
	notify('Saved memory ' + id + ': version ' + data.memory.version + '.');
	if (hashParams().get('memory') === String(id)) await openMemory(id);
}

async function change(id, patch, msg) {
	const data = await api('PATCH', 'memories/' + id, patch);
	replace(data.memory);
	notify(msg);
	refreshCounts();
}

async function remove(id) {
	await api('DELETE', 'memories/' + id);
	notify('Deleted memory ' + id + '. It is kept, never recalled; tick "Show deleted" to restore it.');
	// Fetched again: the answer to a delete is not the memory.
	const data = await api('GET', 'memories/' + id);
	if ($('#f-deleted').checked) replace(data.memory);
	else { state.memories = state.memories.filter((x) => x.id !== id); renderMemories(); }
	refreshCounts();
}

async function purge(id) {
	await api('DELETE', 'memories/' + id + '?purge=true');
	state.purging = 0;
	state.memories = state.memories.filter((x) => x.id !== id);
	renderMemories();
	notify('Purged memory ' + id + ' and its history for good.');
	refreshCounts();
}

async function openMemory(id) {
	const box = $('#detail');
	box.hidden = true;
	const { memory: m } = await api('GET', 'memories/' + encodeURIComponent(id));
	$('#detail-h').textContent = 'Memory ' + m.id;
	const fields = [['Content', m.content], ['Kind', m.kind], ['Source', m.source], ['Version', m.version],
		['Owner', m.owner], ['Session', sessionName(m.session) ? sessionName(m.session) + ' (' + m.session + ')' : m.session], ['Created', when(m.created_at)], ['Updated', when(m.updated_at)],
		['Mentions', m.mentions], ['Uses', m.uses], ['Salience', m.salience != null ? m.salience.toFixed(2) : ''],
		['Pinned', m.pinned ? 'yes' : 'no'], ['Deleted', m.deleted_at ? when(m.deleted_at) + (m.delete_reason ? ' (' + m.delete_reason + ')' : '') : 'no']];
	$('#detail-fields').replaceChildren(...fields.filter(([, v]) => v !== undefined && v !== '').flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]));
	const hist = (m.history || []).slice().reverse();
	$('#history').replaceChildren(...hist.map((v) => el('li', {}, el('span', { class: 'hint' }, 'until ' + when(v.at) + ': '), v.content)));
	$('#history-empty').hidden = hist.length > 0;
	box.hidden = false;
}

// --- what it knows: the profile, the other memories, conversations ------

// scoped reports whether the page shows one owner (self, or an admin who
// picked one): the person's view needs one.
function scoped() { return mode === 'self' || !!state.owner; }

// loadPerson loads what the page shows of the owner as a person: the
// profile first (the others are what it leaves out), then the rest.
async function loadPerson() {
	await guarded(loadProfile);
	await Promise.all([guarded(loadOthers), guarded(loadSessions)]);
}

async function loadProfile() {
	$('#profile').hidden = !scoped();
	if (!scoped()) { state.profile = null; return; }
	state.profile = await api('GET', 'profile' + ownerQuery('?'));
	renderProfile();
	$('#profile').hidden = false;
}

function renderProfile() {
	const data = state.profile;
	if (!data) return;
	$('#profile-h').textContent = mode === 'self' ? 'What it knows about you' : 'What it knows about this owner';
	const facts = data.groups.flatMap((g) => g.facts);
	const riding = facts.filter((f) => f.rides).length;
	let hint;
	if (!data.settings.profile) {
		hint = 'The proxy sends no profile (profile off, or scope session): these facts are added only when a question is about them.';
	} else if (riding === facts.length) {
		hint = 'These facts go with every chat request, first, so the assistant keeps them in mind whatever is asked.';
	} else {
		hint = riding + ' of these ' + facts.length + ' facts go with every chat request; those marked “when relevant” do not fit the profile’s ' +
			data.settings.profile_tokens + ' tokens and come back when a question is about them.';
	}
	$('#profile-hint').textContent = hint + ' Correct what is wrong; forget what should not be kept.';
	$('#profile-groups').replaceChildren(...data.groups.map((g) => el('div', { class: 'group', 'data-group': g.group },
		el('h3', {}, g.title),
		el('ul', { class: 'facts' }, g.facts.map((f) => factItem(f.memory, data.settings.profile && !f.rides))))));
	$('#profile-empty').hidden = facts.length > 0;
}

async function loadOthers() {
	const box = $('#others');
	if (!scoped() || !state.profile) { box.hidden = true; return; }
	const p = new URLSearchParams({ exclude_kind: ['turn', ...state.profile.kinds].join(','), limit: '100' });
	if (mode === 'admin') p.set('owner_id', state.owner);
	const data = await api('GET', 'memories?' + p.toString());
	state.others = data.memories;
	renderOthers();
	$('#others-more').textContent = data.next_cursor ? 'The first 100 are shown; search all memories below for the others.' : '';
	$('#others-more').hidden = !data.next_cursor;
	box.hidden = state.others.length === 0;
}

function renderOthers() {
	$('#others-list').replaceChildren(...state.others.map((m) => factItem(m, false)));
}

// renderFacts draws the profile and the others again (an edit begun or
// given up).
function renderFacts() { renderProfile(); renderOthers(); }

const learnedBy = { rules: 'Learned from a chat', llm: 'Learned from a chat', api: 'Added by hand', import: 'Imported', tool: 'Saved by the assistant' };

// factItem is one fact as a person reads it: the text, where it came from
// and since when, what it replaced, and Edit and Forget, one click each.
function factItem(m, whenRelevant) {
	const tid = 'fact-text-' + m.id;
	const li = el('li', { class: 'fact', 'data-id': m.id });
	if (state.editingFact === m.id) {
		const input = el('input', { type: 'text', id: 'fact-edit-' + m.id, class: 'fact-edit', 'aria-label': 'Correct this: ' + m.content });
		input.value = m.content;
		const cancel = () => { state.editingFact = 0; renderFacts(); };
		input.addEventListener('keydown', (ev) => {
			if (ev.key === 'Enter') { ev.preventDefault(); guarded(() => saveFact(m.id, input.value)); }
			if (ev.key === 'Escape') cancel();
		});
		li.append(el('div', { class: 'fact-row' }, input,
			el('span', { class: 'fact-actions' }, button('Save', () => guarded(() => saveFact(m.id, input.value)), ''), button('Cancel', cancel))));
		setTimeout(() => input.focus(), 0);
	} else {
		li.append(el('div', { class: 'fact-row' },
			el('span', { class: 'fact-text', id: tid }, m.content),
			whenRelevant ? el('span', { class: 'tag', title: 'Does not fit the profile’s budget: added when a question is about it' }, 'when relevant') : null,
			m.pinned ? el('span', { class: 'tag pin' }, 'pinned') : null,
			el('span', { class: 'fact-actions' },
				button('Edit', () => { state.editingFact = m.id; renderFacts(); }, 'quiet', { 'aria-describedby': tid }),
				button('Forget', () => guarded(() => forgetFact(m)), 'quiet danger', { 'aria-describedby': tid }))));
	}
	li.append(el('div', { class: 'fact-meta' }, (learnedBy[m.source] || 'Kept') + (m.version > 1 ? ', changed' : '') + ' · since ' + day(m.updated_at)));
	const hist = m.history || [];
	if (hist.length) {
		// Newest first: what it said until each change.
		const was = [];
		for (let i = hist.length - 1; i >= 0 && was.length < 3; i--) {
			const until = hist[i].until || (hist[i + 1] ? hist[i + 1].at : m.updated_at);
			was.push(el('span', { class: 'old' }, hist[i].content), el('span', {}, ' (until ' + day(until) + ')'), '; ');
		}
		was.pop();
		li.append(el('div', { class: 'was' }, 'Replaced: ', was, hist.length > 3 ? ' and ' + (hist.length - 3) + ' earlier' : ''));
	}
	return li;
}

async function saveFact(id, content) {
	const data = await api('PATCH', 'memories/' + id, { content });
	state.editingFact = 0;
	notify('Saved: ' + data.memory.content);
	await loadPerson();
	await loadMemories();
}

async function forgetFact(m) {
	await api('DELETE', 'memories/' + m.id);
	notify('Forgot: ' + m.content + ' It is no longer sent or recalled.', ['Undo', async () => {
		await api('PATCH', 'memories/' + m.id, { deleted: false });
		notify('Brought back: ' + m.content);
		await loadPerson();
		await loadMemories();
	}]);
	await loadPerson();
	await loadMemories();
	loadStats().catch(showError);
}

async function loadSessions() {
	const box = $('#conversations');
	box.hidden = !scoped();
	if (!scoped()) { state.sessions = new Map(); return; }
	const data = await api('GET', 'sessions?limit=50' + ownerQuery('&'));
	state.sessions = new Map(data.sessions.map((s) => [s.session, s]));
	// What the reader opened stays open (read again) when the list is.
	const open = new Set([...document.querySelectorAll('#conversations details[open]')].map((d) => d.dataset.session));
	$('#conversations-list').replaceChildren(...data.sessions.map((s) => {
		const turns = el('ol', { class: 'turns' });
		const d = el('details', { 'data-session': s.session },
			el('summary', {}, sessionName(s.session), el('span', { class: 'hint' }, ' · ' + s.turns + (s.turns === 1 ? ' turn' : ' turns'))),
			turns);
		d.addEventListener('toggle', () => {
			if (d.open && !d.dataset.loaded) guarded(() => loadTurns(d, turns, s.session));
		});
		d.open = open.has(s.session);
		return d;
	}));
	$('#conversations-empty').hidden = data.sessions.length > 0;
	$('#conversations-more').textContent = data.total > data.sessions.length
		? (data.total - data.sessions.length) + ' older conversations are not shown: tick “Show transcripts” below and search.' : '';
	$('#conversations-more').hidden = data.total <= data.sessions.length;
	renderMemories();
}

async function loadTurns(d, list, session) {
	const p = new URLSearchParams({ session, kind: 'turn', limit: '500' });
	if (mode === 'admin') p.set('owner_id', state.owner);
	const data = await api('GET', 'memories?' + p.toString());
	d.dataset.loaded = '1';
	list.replaceChildren(...data.memories.map((m) => el('li', { class: 'turn', 'data-id': m.id },
		el('div', { class: 'turn-text' }, m.content),
		el('div', { class: 'fact-meta' }, when(m.created_at)))));
}

// --- add, preview -------------------------------------------------------

async function addMemory(ev) {
	ev.preventDefault();
	const body = ownerBody({
		content: $('#add-content').value,
		kind: $('#add-kind').value.trim(),
		session: $('#add-session').value.trim(),
		pinned: $('#add-pinned').checked,
	});
	if (mode === 'admin' && !state.owner) body.owner = $('#add-owner').value;
	const data = await api('POST', 'memories', body);
	$('#add-content').value = '';
	notify((data.op === 'created' ? 'Remembered' : 'Updated') + ' memory ' + data.memory.id + '.');
	await Promise.all([loadMemories(), loadStats(), mode === 'admin' ? loadOwners() : null, loadPerson()]);
}

async function preview(ev) {
	ev.preventDefault();
	const out = $('#preview-out');
	out.replaceChildren();
	const data = await api('POST', 'preview', ownerBody({ query: $('#preview-q').value, session: $('#preview-session').value.trim() }));
	const s = data.settings;
	const settings = el('p', { class: 'hint' }, 'Budget ' + s.max_tokens + ' tokens, ' + s.max_items + ' memories; relevance floor ' +
		s.min_score + (s.gate ? '; gate on' : '') + (s.only_session ? '; this session only' : '') + (s.profile ? '; the profile rides along' : '') + '.');
	if (!data.block) {
		out.append(el('p', { id: 'preview-nothing' }, el('strong', {}, 'Nothing would be injected: '), data.reason || data.nothing));
		if (data.below_floor && data.below_floor.length) {
			out.append(el('p', { class: 'hint' }, 'Closest memories, kept out by the relevance floor:'), scoreTable(data.below_floor));
		}
		out.append(settings);
		return;
	}
	const n = data.memories.length;
	out.append(el('p', {}, el('strong', {}, n + (n === 1 ? ' memory' : ' memories') + ' would be injected'), ', as this block:'),
		el('pre', { class: 'block', id: 'preview-block' }, data.block), scoreTable(data.memories), settings);
}

function scoreTable(rows) {
	return el('table', { class: 'scores' },
		el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Score'), el('th', { scope: 'col' }, 'Kind'), el('th', { scope: 'col' }, 'Memory'))),
		el('tbody', {}, rows.map((r) => el('tr', { 'data-id': r.id },
			el('td', { class: 'num', 'data-label': 'Score' }, r.profile ? 'profile' : r.score.toFixed(3)),
			el('td', { 'data-label': 'Kind' }, r.kind),
			el('td', { class: 'content', 'data-label': 'Memory' }, r.text)))));
}

// refreshCounts updates the counts, and what the page shows of the
// person, after a change, in the background.
function refreshCounts() {
	loadStats().catch(showError);
	if (mode === 'admin') loadOwners().catch(showError);
	loadPerson();
}

// --- stats and charts ---------------------------------------------------

const palette = ['#1f5fbf', '#d97706', '#15803d', '#b42318', '#7c3aed', '#0e7490', '#a16207', '#be185d', '#475569'];

async function loadStats() {
	const [stats, act] = await Promise.all([api('GET', 'stats'), api('GET', 'stats/activity' + ownerQuery('?'))]);
	const cards = [];
	const card = (label, v) => cards.push(el('div', { class: 'stat' }, el('b', {}, v), el('span', {}, label)));
	if (mode === 'self') {
		const c = stats.memories;
		card('memories', c.total); card('deleted', c.deleted); card('expired', c.expired);
	} else {
		card('owners', stats.owners); card('memories (all versions kept)', stats.memories);
		card('index lag', stats.index_lag); card('queued turns', stats.queued_turns + stats.pending_jobs);
		card('database', (stats.file_bytes / 1048576).toFixed(1) + ' MiB');
		card('index', (stats.index_bytes / 1048576).toFixed(1) + ' MiB');
	}
	$('#cards').replaceChildren(...cards);
	$('#chart-kinds').replaceChildren(kindChart(act.days));
	if (act.outcomes) $('#chart-outcomes').replaceChildren(barList(act.outcomes));
}

// kindChart draws memories created per day as stacked bars, one colour a
// kind, with a text summary for screen readers.
function kindChart(days) {
	const kinds = [...new Set(days.flatMap((d) => Object.keys(d.by_kind)))].sort();
	const totals = days.map((d) => Object.values(d.by_kind).reduce((a, b) => a + b, 0));
	const max = Math.max(1, ...totals);
	const W = 600, H = 140, bw = W / days.length;
	const ns = 'http://www.w3.org/2000/svg';
	const svg = document.createElementNS(ns, 'svg');
	svg.setAttribute('viewBox', `0 0 ${W} ${H + 16}`);
	svg.setAttribute('role', 'img');
	const sum = totals.reduce((a, b) => a + b, 0);
	svg.setAttribute('aria-label', sum + ' memories created in the last ' + days.length + ' days, ' +
		kinds.map((k) => k + ' ' + days.reduce((a, d) => a + (d.by_kind[k] || 0), 0)).join(', '));
	days.forEach((d, i) => {
		let y = H;
		kinds.forEach((k, j) => {
			const n = d.by_kind[k] || 0;
			if (!n) return;
			const h = (n / max) * (H - 4);
			y -= h;
			const r = document.createElementNS(ns, 'rect');
			r.setAttribute('x', i * bw + 1); r.setAttribute('y', y); r.setAttribute('width', Math.max(1, bw - 2)); r.setAttribute('height', h);
			r.setAttribute('fill', palette[j % palette.length]);
			const t = document.createElementNS(ns, 'title');
			t.textContent = d.day + ': ' + n + ' ' + k;
			r.append(t);
			svg.append(r);
		});
	});
	for (const [i, anchor] of [[0, 'start'], [days.length - 1, 'end']]) {
		const t = document.createElementNS(ns, 'text');
		t.setAttribute('x', anchor === 'start' ? 0 : W); t.setAttribute('y', H + 13); t.setAttribute('text-anchor', anchor);
		t.setAttribute('font-size', '11'); t.setAttribute('fill', '#5b6474');
		t.textContent = days[i].day;
		svg.append(t);
	}
	const legend = el('div', { class: 'legend' }, kinds.length ? kinds.map((k, j) => el('span', {}, el('i', { style: 'background:' + palette[j % palette.length] }), k)) : 'No memories created in this period.');
	return el('div', {}, svg, legend);
}

function barList(counts) {
	const entries = Object.entries(counts);
	const max = Math.max(1, ...entries.map(([, v]) => v));
	return el('div', { class: 'bars' }, entries.map(([k, v]) => el('div', {},
		el('span', {}, k.replace(/_/g, ' ')),
		el('span', { class: 'bar', style: 'width:' + (100 * v / max).toFixed(1) + '%' }),
		el('span', { class: 'num' }, v))));
}

// --- export, import, forget, consolidate ---------------------------------

async function exportJSONL() {
	const res = await api('GET', 'export' + ownerQuery('?'), undefined, true);
	const blob = await res.blob();
	const text = await blob.text();
	const n = text.split('\n').filter((l) => l.trim()).length;
	const a = el('a', { href: URL.createObjectURL(blob), download: 'memories' + (state.owner ? '-' + state.owner.slice(0, 8) : '') + '.jsonl' });
	document.body.append(a);
	a.click();
	a.remove();
	setTimeout(() => URL.revokeObjectURL(a.href), 10000);
	notify('Exported ' + n + ' memories (' + blob.size + ' bytes) to ' + a.download + '.');
}

async function importJSONL(ev) {
	ev.preventDefault();
	const f = $('#import-file').files[0];
	if (!f) throw new APIError('Choose a JSONL file to import first.');
	const r = await api('POST', 'import' + ownerQuery('?'), f);
	let msg = 'Imported ' + r.imported + ', replaced ' + r.replaced + ', renumbered ' + r.renumbered + '.';
	if (r.failed) msg += ' Skipped ' + r.failed + ' lines' + (r.failed > r.errors.length ? ', the first ' + r.errors.length + ': ' : ': ') +
		r.errors.map((e) => 'line ' + e.line + ': ' + e.message).join('; ');
	notify(msg);
	await Promise.all([loadMemories(), loadStats(), mode === 'admin' ? loadOwners() : null, loadPerson()]);
}

function forgetWord() { return mode === 'self' ? 'forget me' : state.owner; }

function updateForget() {
	const word = forgetWord();
	$('#forget-form').hidden = !word;
	$('#forget-word').textContent = word || '';
	$('#forget-help').textContent = mode === 'self'
		? 'Forget erases every memory of yours, history included, for good.'
		: 'Forget erases every memory of this owner, history included, for good.';
	$('#forget').disabled = $('#forget-confirm').value.trim() !== word;
}

async function forget(ev) {
	ev.preventDefault();
	const word = forgetWord();
	if ($('#forget-confirm').value.trim() !== word) return;
	const path = mode === 'self' ? 'owners/me' : 'owners/' + encodeURIComponent(word) + '?id=true';
	const r = await api('DELETE', path);
	$('#forget-confirm').value = '';
	notify('Forgot owner ' + r.owner_id + '.');
	if (mode === 'admin') { setHash({ owner: '', memory: '' }); await loadOwners(); }
	else await Promise.all([loadMemories(), loadStats(), loadPerson()]);
	updateForget();
}

async function consolidate() {
	const r = await api('POST', 'consolidate' + ownerQuery('?'));
	const parts = Object.entries(r).filter(([, v]) => typeof v === 'number').map(([k, v]) => k.replace(/_/g, ' ') + ' ' + v);
	notify('Consolidation done: ' + (parts.join(', ') || 'nothing to do') + '.');
	await Promise.all([loadMemories(), loadStats(), loadPerson()]);
}

// --- sign in (self mode) ------------------------------------------------

// signOut forgets the key: on request, or when the API refused it. The
// sign-in form then offers to go on without one when the API knows the
// caller without it.
function signOut() {
	sessionStorage.removeItem(keyName);
	showLogin();
}

function showLogin() {
	$('#app').hidden = true;
	$('#logout').hidden = true;
	$('#who').hidden = true;
	$('#login').hidden = false;
	$('#login-keyless').hidden = !state.keyless;
	$('#login-keyless-text').textContent = local
		? 'On this machine you need no key: what your chat clients sent without one (Ollama\'s own, for one) is remembered as yours. A key shows that key\'s memories instead.'
		: 'This server knows who you are without a key. A key shows that key\'s memories instead.';
}

// keylessCaller asks the API, with no key, whether it knows the caller
// anyway: the person at this machine ({memory.local_user}), or an identity
// Caddy's own auth gives. The API resolves it as the proxy does, so this
// is never true for a keyless client elsewhere. It answers true, false
// (401: a key is needed), or the API's error (a damaged storage's 503),
// which no key would change.
async function keylessCaller() {
	if (mode !== 'self') return false;
	let res;
	try {
		res = await fetch(base + 'stats', { credentials: 'same-origin', cache: 'no-store' });
	} catch (e) {
		return false;
	}
	if (res.ok || res.status === 401) return res.ok;
	let msg = 'The memory API answered ' + res.status + '.';
	try { msg = (await res.json()).error.message || msg; } catch (e) { /* not JSON */ }
	return new APIError(msg, res.status, 'probe');
}

// markCaller says in the header whose memories these are, and what the
// header's button does: sign out of a key, or sign in with one.
function markCaller() {
	const keyed = !!sessionStorage.getItem(keyName);
	$('#logout').hidden = mode !== 'self';
	$('#logout').textContent = keyed ? 'Sign out' : 'Sign in with a key';
	$('#who').hidden = mode !== 'self' || keyed;
	$('#who').textContent = local ? 'you, at this machine (no key)' : 'you, as this server knows you (no key)';
}

async function signIn(ev) {
	ev.preventDefault();
	sessionStorage.setItem(keyName, $('#login-key').value.trim());
	$('#login-key').value = '';
	try {
		await api('GET', 'stats');
	} catch (e) {
		sessionStorage.removeItem(keyName);
		throw e;
	}
	$('#login').hidden = true;
	await start();
}

// continueKeyless goes back to the memories the API knows the caller by
// without a key.
async function continueKeyless() {
	sessionStorage.removeItem(keyName);
	$('#login').hidden = true;
	await start();
}

// --- start --------------------------------------------------------------

async function start() {
	$('#app').hidden = false;
	markCaller();
	markOwner();
	updateForget();
	if (mode === 'admin') {
		await guarded(loadOwners);
		state.owner = hashParams().get('owner') || '';
		markOwner();
		updateForget();
	}
	await Promise.all([guarded(loadMemories), guarded(loadStats), guarded(loadRecent), loadPerson()]);
	await route();
}

function wire() {
	$('#mode-badge').textContent = mode === 'self' ? 'my memories' : 'admin';
	let timer;
	$('#q').addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(() => guarded(loadMemories), 250); });
	for (const id of ['#f-kind', '#f-source', '#f-session', '#f-turns', '#f-deleted']) $(id).addEventListener('change', () => guarded(loadMemories));
	$('#more').addEventListener('click', () => guarded(() => loadMemories(true)));
	$('#detail-close').addEventListener('click', () => setHash({ memory: '' }));
	$('#add-form').addEventListener('submit', (ev) => guarded(() => addMemory(ev)));
	$('#preview-form').addEventListener('submit', (ev) => guarded(() => preview(ev)));
	$('#find-form').addEventListener('submit', (ev) => guarded(() => findOwner(ev)));
	$('#refresh').addEventListener('click', () => guarded(async () => { await Promise.all([loadMemories(), loadStats(), loadRecent(), checkHealth(), mode === 'admin' ? loadOwners() : null, loadPerson()]); }));
	$('#consolidate').addEventListener('click', () => guarded(consolidate));
	$('#export').addEventListener('click', () => guarded(exportJSONL));
	$('#import-form').addEventListener('submit', (ev) => guarded(() => importJSONL(ev)));
	$('#forget-confirm').addEventListener('input', updateForget);
	$('#forget-form').addEventListener('submit', (ev) => guarded(() => forget(ev)));
	$('#login-form').addEventListener('submit', (ev) => guarded(() => signIn(ev)));
	$('#login-continue').addEventListener('click', () => guarded(continueKeyless));
	$('#logout').addEventListener('click', () => { signOut(); location.hash = ''; });
	window.addEventListener('hashchange', () => { if (!$('#app').hidden) route(); });
	checkHealth();
	setInterval(checkHealth, 30000);
	if (mode === 'self') {
		// Asked once: whether the page can open without a key, for the
		// person at this machine (and, after a sign-out, go back to that).
		keylessCaller().then((ok) => {
			if (ok instanceof Error) {
				showError(ok); // a damaged storage: what to run, not a key form
				return;
			}
			state.keyless = ok;
			if (ok || sessionStorage.getItem(keyName)) start();
			else showLogin();
		});
		return;
	}
	start();
}

wire();
