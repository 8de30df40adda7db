/**
 * Terminal clients on the drive's server: an operator's `tmux attach` (found by the attach
 * handshake, then followed through %client-session-changed and %client-detached). Control clients
 * are named `client-PID` by tmux and are not operators. Every change is reported with the whole set.
 */
export class OperatorClients {
  private readonly names = new Set<string>();

  constructor(private readonly report: (names: string[]) => void) {}

  /** Clients the attach handshake found already attached. */
  found(names: readonly string[]): void {
    for (const name of names) this.names.add(name);
    if (this.names.size > 0) this.report([...this.names]);
  }

  sessionChanged(client: string): void {
    if (client.startsWith('client-')) return;
    this.names.add(client);
    this.report([...this.names]);
  }

  detached(client: string): void {
    if (this.names.delete(client)) this.report([...this.names]);
  }
}
