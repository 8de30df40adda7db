/**
 * Keys to the drive's pane: typed text, pastes and named keys. Keys typed into a copy or view mode
 * (an operator scrolled back, or a program's `copy-mode`) go to the mode, not the program, so
 * input leaves it first; the mode is followed from tmux's `%pane-mode-changed`.
 * Out of a mode (nearly always) the keys are written to tmux within the call, before it returns:
 * the session marks the input right after, in the same turn, before any reply can be read, and
 * records it in the audit once tmux has answered (lib/session/input-gate.ts). Typed keys first tell
 * the client an echo is due (`expectEcho`): the read pacer holds other drives' output until it comes.
 */
import type { PaneId } from '../../lib/control/parser.js';
import { cancelPaneMode, displayMessage, encodeSendKeys, encodeSendText, pasteText } from '../../lib/control/tmux-commands.js';
import type { ControlClient } from './control-client.js';

/** A paste's deadline grows with its size: tmux 3.3a lexed a 1 MB command line in ~0.5 s here. */
const PASTE_MS_PER_KCHAR = 10;

export interface PaneInputPort {
  /** The drive's control client (throws when it is not connected). */
  readonly client: () => ControlClient;
  readonly pane: () => PaneId;
  readonly timeoutMs: number;
}

export class PaneInput {
  private inMode = false;

  constructor(private readonly port: PaneInputPort) {}

  /** tmux said the pane's mode changed: ask which it is now. */
  async refreshMode(): Promise<void> {
    try {
      this.inMode = (await this.port.client().command(displayMessage(this.port.pane(), '#{pane_in_mode}'))).text() === '1';
    } catch {
      /* the session is ending */
    }
  }

  sendText(text: string, opts: { readonly paste: boolean }): Promise<void> {
    return this.inMode ? this.leaveMode().then(() => this.writeText(text, opts)) : this.writeText(text, opts);
  }

  async sendKeys(keys: readonly string[]): Promise<void> {
    const line = encodeSendKeys(this.port.pane(), keys);
    if (this.inMode) await this.leaveMode();
    const client = this.port.client();
    client.expectEcho();
    await client.command(line);
  }

  private async leaveMode(): Promise<void> {
    await this.port.client().command(cancelPaneMode(this.port.pane()));
    this.inMode = false;
  }

  private async writeText(text: string, opts: { readonly paste: boolean }): Promise<void> {
    if (opts.paste) return this.paste(text);
    const lines = encodeSendText(this.port.pane(), text);
    if (lines.length === 0) return;
    const client = this.port.client();
    client.expectEcho();
    await client.batch(lines);
  }

  /**
   * Large or multi-line text: set-buffer in chunks, then a bracketed-when-asked paste, in one batch.
   * Nothing touches the disk: a host killed mid-paste leaves typed text nowhere but in tmux's
   * memory, and the next attach deletes that buffer.
   */
  private async paste(text: string): Promise<void> {
    await this.port.client().batch(pasteText(this.port.pane(), text), this.port.timeoutMs + Math.ceil(text.length / 1000) * PASTE_MS_PER_KCHAR);
  }
}
