/**
 * @xterm/xterm as the emulator's fence sees it (lib/emulator/tsconfig.json maps the module here):
 * the names @xterm/addon-serialize's typings import, taken from @xterm/headless, whose terminal
 * is the one the mirror really hands the addon. The real @xterm/xterm typings reference the DOM
 * lib, which would bring setTimeout and `document` into the pure layers.
 */
export { Terminal } from '@xterm/headless';
export type { IBufferRange, IMarker, ITerminalAddon } from '@xterm/headless';
