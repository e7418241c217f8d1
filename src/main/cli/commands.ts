import type { Command } from './command';
import { gatewayCommand } from './gateway-command';

/** Every `homing` command, in the order `homing --help` lists them. */
export const commands: readonly Command[] = [gatewayCommand];
