// The console's CSP (style-src 'self') refuses <style> elements, and
// xterm.js makes three (its theme, its cell size, its scrollbar) and sets
// their text.  The build (vite.config.js, xtermStyles) has xterm make an
// <sbx-style> instead: an element that draws nothing and puts the text it
// is given into a constructed style sheet adopted by the document, which
// the CSP allows (no inline style, nothing from the network).  The rules
// xterm writes name its own terminal's class, so the sheets stay apart.
class SbxStyle extends HTMLElement {
	constructor() {
		super();
		this.sheet = new CSSStyleSheet();
		this.css = '';
	}

	get textContent() { return this.css; }

	set textContent(v) {
		this.css = String(v == null ? '' : v);
		this.sheet.replaceSync(this.css);
	}

	connectedCallback() {
		if (!document.adoptedStyleSheets.includes(this.sheet))
			document.adoptedStyleSheets = [...document.adoptedStyleSheets, this.sheet];
	}

	disconnectedCallback() {
		document.adoptedStyleSheets = document.adoptedStyleSheets.filter((s) => s !== this.sheet);
	}
}

if (!customElements.get('sbx-style')) customElements.define('sbx-style', SbxStyle);
