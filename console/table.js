// The table of drives: the attention queue (drives waiting for a person) first, then the rest.
import { age, connect, el, whoami } from './common.js';

const rows = new Map();
const body = document.querySelector('#drives tbody');
const empty = document.getElementById('empty');
const link = document.getElementById('link');

function stateCell(r) {
  const td = el('td', undefined, r.state ? `state-${r.state}` : '');
  td.dataset.col = 'state';
  td.append(el('span', r.state ?? r.lifecycle, 'value'));
  const why = [r.confidence, r.reason, r.dialog ? `dialog: ${r.dialog}` : undefined, r.heldBy ? `held by pid ${r.heldBy}` : undefined].filter(Boolean).join(' · ');
  if (why) td.append(el('div', why, 'sub'));
  return td;
}

function outcomeCell(r) {
  const td = el('td', undefined, r.outcome ? `outcome-${r.outcome.outcome}` : '');
  td.dataset.col = 'outcome';
  if (r.outcome) {
    td.append(el('span', r.outcome.outcome, 'value'));
    td.append(el('div', [r.outcome.reason, r.outcome.dialog].filter(Boolean).join(' · '), 'sub'));
  } else if (r.attention) {
    td.append(el('span', r.attention.kind, 'value'));
    td.append(el('div', [r.attention.reason, r.attention.dialog].filter(Boolean).join(' · '), 'sub'));
  }
  return td;
}

function cell(col, text, sub) {
  const td = el('td', text);
  td.dataset.col = col;
  if (sub) td.append(el('div', sub, 'sub'));
  return td;
}

function render() {
  const sorted = [...rows.values()].sort((a, b) => Number(b.waiting) - Number(a.waiting) || a.name.localeCompare(b.name));
  const now = Date.now();
  body.replaceChildren(
    ...sorted.map((r) => {
      const tr = el('tr', undefined, r.waiting ? 'waiting' : '');
      tr.dataset.drive = r.name;
      const name = el('td');
      name.dataset.col = 'name';
      const a = el('a', r.name);
      a.href = `/drive/${encodeURIComponent(r.name)}`;
      name.append(a);
      tr.append(
        name,
        cell('program', r.allowId, r.profile),
        stateCell(r),
        outcomeCell(r),
        cell('attached', r.attached.length > 0 ? r.attached.join(', ') : '—'),
        cell('interactions', r.interactions ?? '—'),
        cell('age', age(now - Date.parse(r.createdAt))),
      );
      return tr;
    }),
  );
  empty.hidden = rows.size > 0;
}

connect('/ws/fleet', {
  onState: (text) => (link.textContent = text),
  onMessage(m) {
    if (m.type === 'fleet') {
      rows.clear();
      for (const r of m.rows) rows.set(r.name, r);
    } else if (m.type === 'rows') {
      for (const r of m.rows) rows.set(r.name, r);
      for (const name of m.removed) rows.delete(name);
    } else if (m.type === 'error') {
      link.textContent = `${m.code}: ${m.message}`;
      return;
    } else return;
    render();
  },
});

// Ages tick in the page; the host sends nothing for them.
setInterval(() => {
  const now = Date.now();
  for (const tr of body.children) {
    const r = rows.get(tr.dataset.drive);
    const td = tr.querySelector('td[data-col="age"]');
    if (r && td) td.textContent = age(now - Date.parse(r.createdAt));
  }
}, 1000);

whoami().then((me) => {
  if (me) document.getElementById('who').textContent = `token ${me.tokenId} (${me.classes.join(', ')})`;
});
