// The app's name at the head of its page.
export function AppTitle({app}) {
	return <h1>{app.name}</h1>;
}
