// An OpenSSH server for the tests that fetch git over ssh: /usr/sbin/sshd on
// 127.0.0.1 (a free port), key-only logins as root, the given public keys
// authorised, a host key made for it. It serves git as any git host does:
// the client runs git-upload-pack '<absolute path>' through root's shell.
// Also createRepo(), a git repository to serve (made with /usr/bin/git, run
// with an argument list, never a shell). Node 20, no dependencies.
//
//   const sshd = await startSshd({ authorizedKey: gitSource.publicKey });
//   const repo = await createRepo({ files: { 'index.html': 'v1\n' } });
//   ... gitUrl = sshd.url(repo.path)   // ssh://root@127.0.0.1:<port>/tmp/...
//   ... sshd.hostKeyFingerprint        // "SHA256:...", as the build log shows it
//   await sshd.stop();
//
// A machine without /usr/sbin/sshd, ssh-keygen or git makes the file exit 77
// with the reason (apt-get install openssh-server openssh-client git).
// sshd needs /run/sshd (made here) and runs as root. Everything it started
// is stopped, and its directory removed, when the process exits.

import { spawn, execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { makeTempDir, freePort, need, sleep } from './harness.mjs';

const SSHD = '/usr/sbin/sshd';
const SSH_KEYGEN = '/usr/bin/ssh-keygen';
const GIT = '/usr/bin/git';

const running = new Set();
process.on('exit', () => {
	for (const proc of running) {
		try {
			proc.kill('SIGKILL');
		} catch {}
	}
});


function run(file, args, opts = {}) {
	return new Promise((resolve, reject) => {
		execFile(file, args, { encoding: 'utf8', timeout: 30000, ...opts }, (err, stdout, stderr) => {
			if (err) reject(new Error(`${path.basename(file)} ${args.join(' ')}: ${err.message}\n${stderr}`));
			else resolve(stdout.trim());
		});
	});
}

// Resolves once the port answers with an SSH banner.
async function waitBanner(port, proc, logPath, ms = 10000) {
	const deadline = Date.now() + ms;
	while (Date.now() < deadline) {
		if (proc.exitCode !== null) break;
		const ok = await new Promise((resolve) => {
			const s = net.connect(port, '127.0.0.1');
			let buf = '';
			s.setTimeout(1000, () => s.destroy());
			s.on('data', (d) => {
				buf += d.toString('latin1');
				if (buf.length >= 7) s.destroy();
			});
			s.on('error', () => {});
			s.on('close', () => resolve(buf.startsWith('SSH-2.0')));
		});
		if (ok) return;
		await sleep(50);
	}
	const log = fs.existsSync(logPath) ? fs.readFileSync(logPath, 'utf8') : '';
	throw new Error(`sshd did not start on 127.0.0.1:${port}\n${log}`);
}

// authorizedKey: one authorized_keys line (e.g. a git source's publicKey),
// or an array of them. Resolves to {port, user, hostKeyFingerprint,
// url(path), scpUrl(path) (port 22 only: the scp form has no port),
// log() (sshd's own log text), stop()}.
export async function startSshd({ authorizedKey } = {}) {
	need(SSHD, 'openssh-server');
	need(SSH_KEYGEN, 'openssh-client');
	const keys = [authorizedKey].flat().filter(Boolean);
	if (!keys.length) throw new Error('startSshd: authorizedKey is required');
	for (const k of keys) {
		if (typeof k !== 'string' || /[\r\n]/.test(k) || !/^(ssh-|ecdsa-)/.test(k)) {
			throw new Error(`startSshd: not one authorized_keys line: ${JSON.stringify(k)}`);
		}
	}
	const dir = makeTempDir('sw-sshd-');
	const hostKey = path.join(dir, 'host_ed25519');
	await run(SSH_KEYGEN, ['-q', '-t', 'ed25519', '-N', '', '-C', 'steward-test-host', '-f', hostKey]);
	// "256 SHA256:... comment (ED25519)"
	const hostKeyFingerprint = (await run(SSH_KEYGEN, ['-l', '-f', `${hostKey}.pub`])).split(' ')[1];
	const authorized = path.join(dir, 'authorized_keys');
	fs.writeFileSync(authorized, keys.join('\n') + '\n', { mode: 0o600 });
	fs.mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });

	const port = await freePort();
	const config = path.join(dir, 'sshd_config');
	fs.writeFileSync(
		config,
		[
			`Port ${port}`,
			'ListenAddress 127.0.0.1',
			`HostKey ${hostKey}`,
			'PidFile none',
			`AuthorizedKeysFile ${authorized}`,
			'PubkeyAuthentication yes',
			'PasswordAuthentication no',
			'KbdInteractiveAuthentication no',
			'UsePAM no',
			// the key files live under /tmp (mode 1777): StrictModes would refuse them
			'StrictModes no',
			'PermitRootLogin prohibit-password',
			'AllowUsers root',
			'LogLevel VERBOSE',
			'',
		].join('\n'),
	);
	const logPath = path.join(dir, 'sshd.log');
	const logFd = fs.openSync(logPath, 'a', 0o600);
	const proc = spawn(SSHD, ['-D', '-e', '-f', config], { stdio: ['ignore', logFd, logFd] });
	fs.closeSync(logFd);
	running.add(proc);
	proc.on('exit', () => running.delete(proc));
	try {
		await waitBanner(port, proc, logPath);
	} catch (e) {
		proc.kill('SIGKILL');
		throw e;
	}
	return {
		port,
		user: 'root',
		hostKeyFingerprint,
		url: (p) => `ssh://root@127.0.0.1:${port}${p}`,
		log: () => (fs.existsSync(logPath) ? fs.readFileSync(logPath, 'utf8') : ''),
		async stop() {
			if (proc.exitCode !== null || proc.signalCode !== null) return;
			const done = new Promise((resolve) => proc.once('exit', resolve));
			proc.kill('SIGTERM');
			await done;
		},
	};
}

// A git repository (non-bare, branch `branch`) in a new temporary directory
// whose path is valid in a Steward git URL ([A-Za-z0-9._~-] components).
// files: {relative path: content}; each entry of `commits` (after the first,
// made of `files`) is another {message, files} on top. Tags: {name: commit
// index}. Resolves to {path, fileUrl, shas: [sha of each commit], git(args)}.
export async function createRepo({ files = { 'index.html': 'hello\n' }, branch = 'main', message = 'Initial commit',
	commits = [], tags = {} } = {}) {
	need(GIT, 'git');
	const dir = path.join(makeTempDir('sw-repo-'), 'repo');
	fs.mkdirSync(dir);
	const env = {
		PATH: '/usr/bin:/bin',
		HOME: dir,
		GIT_CONFIG_NOSYSTEM: '1',
		GIT_AUTHOR_NAME: 'Ada Lovelace',
		GIT_AUTHOR_EMAIL: 'ada@example.com',
		GIT_COMMITTER_NAME: 'Steward Test',
		GIT_COMMITTER_EMAIL: 'test@example.com',
	};
	const git = (args) => run(GIT, args, { cwd: dir, env });
	await git(['init', '-q', '-b', branch]);
	const shas = [];
	for (const c of [{ message, files }, ...commits]) {
		for (const [name, content] of Object.entries(c.files || {})) {
			fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
			fs.writeFileSync(path.join(dir, name), content);
		}
		await git(['add', '-A']);
		await git(['commit', '-q', '--allow-empty', '-m', c.message || 'Change']);
		shas.push(await git(['rev-parse', 'HEAD']));
	}
	for (const [name, index] of Object.entries(tags)) await git(['tag', name, shas[index]]);
	return { path: dir, fileUrl: `file://${dir}`, shas, git };
}
