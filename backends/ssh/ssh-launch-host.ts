/**
 * The remote half of a remote launch: the facts lib/launch/remote-launch.ts decides on, read on
 * the host in ONE fixed probe over its ssh channel (RemoteLaunchHost, the port the policy declares).
 * The probe only reports; refusing is the policy's job.
 */
import type { RemoteLaunchFacts, RemoteLaunchHost } from '../../lib/launch/remote-launch.js';
import { remoteDataDir, type SshHost } from './ssh-host.js';

/**
 * One fixed probe: canonical binary, executable?, optional sha256, HOME, bwrap, tmux, and the
 * remote data dir + workspace created 0700. Values come back one per line as key=value; the
 * caller's words arrive as quoted positional parameters, never as script text.
 */
const PROBE = [
  'b=$(readlink -f -- "$1") && [ -f "$b" ] && [ -x "$b" ] && printf "bin=%s\\n" "$b"',
  'printf "home=%s\\n" "$HOME"',
  'printf "bwrap=%s\\n" "$(command -v bwrap)"',
  'printf "tmux=%s\\n" "$(command -v tmux)"',
  'if [ "$2" = hash ] && [ -n "$b" ]; then printf "sha=%s\\n" "$(sha256sum -- "$b" | cut -d" " -f1)"; fi',
  // The pane argv starts with `env -u … [-C dir]` (coreutils 8.28+): check that env can.
  '/usr/bin/env -u TMUX -C / -- true 2>/dev/null && printf "envwrap=1\\n"',
  'mkdir -p -m 700 -- "$3" "$3/tmux" "$3/workspace" && cd "$3" && printf "data=%s\\n" "$(pwd -P)"',
  'true',
].join('\n');

export class SshLaunchHost implements RemoteLaunchHost {
  constructor(private readonly host: SshHost) {}

  get id(): string {
    return this.host.id;
  }

  get dataDir(): string {
    return remoteDataDir(this.host.config);
  }

  async probeLaunch(binaryPath: string, opts: { readonly sha256: boolean }): Promise<RemoteLaunchFacts> {
    const out = (await this.host.script(PROBE, [binaryPath, opts.sha256 ? 'hash' : 'nohash', this.dataDir])).stdout;
    const values = new Map<string, string>();
    for (const line of out.split('\n')) {
      const eq = line.indexOf('=');
      if (eq > 0) values.set(line.slice(0, eq), line.slice(eq + 1));
    }
    const present = (key: string): string | undefined => values.get(key) || undefined;
    return {
      binary: present('bin'),
      sha256: present('sha'),
      home: values.get('home') ?? '',
      bwrap: present('bwrap'),
      tmux: present('tmux'),
      envWrap: values.get('envwrap') === '1',
      dataDir: present('data'),
    };
  }
}
