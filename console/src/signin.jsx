import {useState} from 'preact/hooks';
import {authState, signIn, signInAgain} from './api.js';
import {ErrorText, setTitle} from './ui.jsx';

export function SignIn() {
	const auth = authState();
	const setup = !auth.password_set;
	const next = new URLSearchParams(location.search).get('next');
	const back = next && next.startsWith('/apps/');
	const [code, setCode] = useState('');
	const [pw, setPw] = useState('');
	const [pw2, setPw2] = useState('');
	const [busy, setBusy] = useState(false);
	const [error, setError] = useState(null);
	setTitle(setup ? 'Set up' : 'Sign in');

	const submit = async (e) => {
		e.preventDefault();
		setError(null);
		if (setup && pw !== pw2) {
			setError(new Error('The two passwords are not the same.'));
			return;
		}
		setBusy(true);
		try {
			if (setup) await signIn('setup', {setup_code: code.trim(), password: pw});
			else await signIn('login', {password: pw});
		} catch (err) {
			if (err.status === 429) {
				const s = err.headers && err.headers.get('retry-after');
				err.message = 'Too many tries. ' + (s ? `Wait ${s} seconds and try again.` : 'Wait a minute and try again.');
			}
			setError(err);
			setBusy(false);
		}
	};

	return (
		<main class="signin">
			<form class="card" onSubmit={submit} aria-labelledby="signin-title">
				<h1 id="signin-title">{setup ? 'Set up sandboxd' : 'Sign in to sandboxd'}</h1>
				{!setup && back && <p>Sign in to go back to where you were; anything you had not saved is kept in this browser.</p>}
				{setup && (
					<p>
						Choose the password for this console. To prove you run this machine,
						also enter the setup code sandboxd printed when it first started
						(run <code>sandboxd setup-code</code> on the host to see it again).
					</p>
				)}
				{setup && (
					<label>Setup code
						<input name="setup_code" autocomplete="off" required value={code}
							onInput={(e) => setCode(e.currentTarget.value)} placeholder="ABCD-EFGH-JKLM-NPQR" autofocus />
					</label>
				)}
				<label>{setup ? 'New password (at least 8 characters)' : 'Password'}
					<input name="password" type="password" required minLength={setup ? 8 : undefined}
						autocomplete={setup ? 'new-password' : 'current-password'} value={pw}
						onInput={(e) => setPw(e.currentTarget.value)} autofocus={!setup} />
				</label>
				{setup && (
					<label>Repeat the password
						<input name="password2" type="password" required autocomplete="new-password" value={pw2}
							onInput={(e) => setPw2(e.currentTarget.value)} />
					</label>
				)}
				<ErrorText error={error} />
				<button type="submit" class="primary" disabled={busy}>
					{setup ? 'Set password and sign in' : 'Sign in'}
				</button>
			</form>
		</main>
	);
}

// Shown over the page when a request finds the session gone (expired, or
// logged out elsewhere): the page and the drafts stay; Sign in comes back
// here.
export function SessionEnded() {
	return (
		<div class="session-ended" role="alert" aria-labelledby="se-title">
			<p><strong id="se-title">Your session ended.</strong>{' '}
				Sign in to continue — your unsaved work is kept in this browser.</p>
			<button class="primary" onClick={signInAgain}>Sign in</button>
		</div>
	);
}
