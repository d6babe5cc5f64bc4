// Runs once before every jest run. The event-store lib fills this in: it
// checks Postgres and Redis answer and migrates the template database that
// each integration test file clones.
export default async function globalSetup(): Promise<void> {}
