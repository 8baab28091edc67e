import {useState} from 'preact/hooks';
import {patch, enc} from './api.js';
import {ErrorText, Note} from './ui.jsx';

// What the credential proxy counted for an app and the budget that stops
// its model calls (GET /v1/apps/{id} .spend; PATCH … {"budget"}).

export function usd(n) {
	return '$' + (n || 0).toFixed(n >= 1 ? 2 : 4);
}

export function budgetWords(b) {
	if (!b) return 'no budget';
	const parts = [];
	if (b.usd != null) parts.push(usd(b.usd));
	if (b.tokens != null) parts.push(b.tokens.toLocaleString() + ' tokens');
	return parts.join(' or ');
}

// One line for the app's head: "spent $0.0123 of $5.00".
export function SpendLine({app}) {
	const s = app.spend;
	if (!s) return null;
	const over = s.budget && ((s.budget.usd != null && s.spent.usd >= s.budget.usd) ||
		(s.budget.tokens != null && s.spent.tokens >= s.budget.tokens));
	return (
		<span class={over ? 'error' : 'muted'} title={s.spent.tokens.toLocaleString() + ' tokens in ' + s.spent.requests + ' answers'}>
			Model spend {usd(s.spent.usd)}{s.budget ? ' of ' + budgetWords(s.budget) : ''}{over ? ': budget reached' : ''}
		</span>
	);
}

export function Spend({app, onChange}) {
	const s = app.spend || {spent: {tokens: 0, usd: 0, requests: 0}, budget: null};
	const own = s.budget_source === 'app';
	const [dollars, setDollars] = useState(own && s.budget.usd != null ? String(s.budget.usd) : '');
	const [tokens, setTokens] = useState(own && s.budget.tokens != null ? String(s.budget.tokens) : '');
	const [error, setError] = useState(null);
	const [ok, setOk] = useState('');
	const save = async (budget) => {
		setError(null); setOk('');
		try {
			await patch('/v1/apps/' + enc(app.id), {budget});
			setOk(budget ? 'Budget saved.' : 'Budget removed.');
			onChange();
		} catch (e) { setError(e); }
	};
	const submit = (e) => {
		e.preventDefault();
		const b = {};
		if (dollars.trim()) b.usd = Number(dollars);
		if (tokens.trim()) b.tokens = Number(tokens);
		save(Object.keys(b).length ? b : null);
	};
	return (
		<div class="page">
			<h2>Model spend</h2>
			<p>
				{usd(s.spent.usd)} for {s.spent.tokens.toLocaleString()} tokens
				({s.spent.input_tokens?.toLocaleString() ?? 0} in, {s.spent.output_tokens?.toLocaleString() ?? 0} out,
				{' '}{((s.spent.cache_read_tokens || 0) + (s.spent.cache_write_tokens || 0)).toLocaleString()} cached)
				in {s.spent.requests} answers, counted by sandboxd’s credential proxy.
			</p>
			<p>Budget: {budgetWords(s.budget)}{s.budget_source === 'instance' ? ' (the instance default)' : ''}.
				When it is reached, model calls are refused and the running task ends.</p>
			<form onSubmit={submit} class="card">
				<label>At most $ <input inputMode="decimal" value={dollars} onInput={(e) => setDollars(e.currentTarget.value)} aria-label="Budget in US dollars" /></label>
				{' '}<label>or tokens <input inputMode="numeric" value={tokens} onInput={(e) => setTokens(e.currentTarget.value)} aria-label="Budget in tokens" /></label>
				{' '}<button class="primary" type="submit">Save budget</button>
				{own && <> <button type="button" onClick={() => { setDollars(''); setTokens(''); save(null); }}>Remove</button></>}
			</form>
			{ok && <Note>{ok}</Note>}
			<ErrorText error={error} />
		</div>
	);
}
