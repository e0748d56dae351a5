// Deployments as the pipeline leaves them, without a pipeline: a row
// inserted straight into PostgreSQL and its log a file written straight
// into STEWARD_DATA_DIR/logs/<id>.log. With STEWARD_RUNNERS=false nothing
// else touches those rows; a deployment "running" here runs in no process
// of the server, so GET /deployments/:id/live polls its file and row.
// Shared by deployment_logs.test.mjs and the dashboard's browser test.
import fs from 'node:fs';
import path from 'node:path';

// pg: from startPostgres(); srv: a stewardd started on it.
export function deploymentRows(pg, srv) {
	const sql = (q) => pg.psql(q, srv.dbName);
	const dataDir = srv.env.STEWARD_DATA_DIR;
	let number = 0;
	// A deployment row (status, errorMessage, byte count) of who.org.id's application.
	async function insertDeployment(who, appId, { status = 'SUCCEEDED', error = null, bytes = 0 } = {}) {
		const err = error === null ? 'NULL' : `'${error.replaceAll("'", "''")}'`;
		const id = await sql(
			`INSERT INTO deployments (organization_id, application_id, number, trigger, status, error_message,` +
				` log_byte_count, started_at, finished_at) VALUES ('${who.org.id}', '${appId}', ${++number},` +
				` 'MANUAL', '${status}', ${err}, ${bytes}, now(), ` +
				`${['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(status) ? 'now()' : 'NULL'}) RETURNING id`,
		);
		return id.trim();
	}
	function logPath(id) {
		return path.join(dataDir, 'logs', `${id}.log`);
	}
	function writeLog(id, content) {
		fs.mkdirSync(path.join(dataDir, 'logs'), { recursive: true, mode: 0o700 });
		fs.writeFileSync(logPath(id), content);
	}
	return { sql, insertDeployment, logPath, writeLog };
}
