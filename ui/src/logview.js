// The live build log's renderer: plain DOM, outside Preact's diffing.
//
// Lines arrive in bursts (a whole archived log at once, then about a
// thousand a second from a busy build). They are queued and written once
// per animation frame as one fragment, so the page never lays out more than
// once a frame however fast they come; only the last `max` lines stay in
// the document (the full log is one link away), so a long build costs the
// same as a short one. It follows the tail unless the reader scrolled up.

export class LogView {
	constructor(root, { max = 2000 } = {}) {
		this.max = max;
		this.total = 0; // lines received
		this.rendered = 0; // lines in the document
		this.pending = [];
		this.scheduled = false;
		this.follow = true;
		this.root = root;
		this.note = root.appendChild(document.createElement('p'));
		this.note.className = 'log-note';
		this.note.hidden = true;
		this.body = root.appendChild(document.createElement('div'));
		this.body.className = 'log-lines';
		root.addEventListener('scroll', () => {
			this.follow = root.scrollTop + root.clientHeight >= root.scrollHeight - 4;
		});
	}

	// text: whole lines joined by "\n" (the data of one "log" event).
	append(text) {
		const lines = text.split('\n');
		for (const l of lines) this.pending.push(l);
		// Never hold more than a screenful beyond what will be shown.
		if (this.pending.length > 2 * this.max) {
			const drop = this.pending.length - this.max;
			this.pending.splice(0, drop);
			this.total += drop;
		}
		if (!this.scheduled) {
			this.scheduled = true;
			if (document.hidden) setTimeout(() => this.flush(), 250);
			else requestAnimationFrame(() => this.flush());
		}
	}

	flush() {
		this.scheduled = false;
		let lines = this.pending;
		this.pending = [];
		this.total += lines.length;
		if (lines.length > this.max) lines = lines.slice(lines.length - this.max);
		const frag = document.createDocumentFragment();
		for (const l of lines) {
			const div = document.createElement('div');
			div.textContent = l;
			frag.appendChild(div);
		}
		this.body.appendChild(frag);
		this.rendered += lines.length;
		const excess = this.rendered - this.max;
		if (excess > 0) {
			const range = document.createRange();
			range.setStartBefore(this.body.firstChild);
			range.setEndAfter(this.body.children[excess - 1]);
			range.deleteContents();
			this.rendered -= excess;
		}
		const hidden = this.total - this.rendered;
		this.note.hidden = hidden === 0;
		this.note.textContent = `${hidden} earlier line${hidden === 1 ? '' : 's'} not shown here; the full log has them.`;
		this.root.dataset.lines = String(this.total);
		if (this.follow) this.root.scrollTop = this.root.scrollHeight;
	}
}
