import type { Command } from './command';
import { deliveriesCommand } from './deliveries-command';
import { demoCommand } from './demo-command';
import { doctorCommand } from './doctor-command';
import { gatewayCommand } from './gateway-command';
import { pairingCommand } from './pairing-command';
import { schedulesCommand } from './schedules-command';
import { serviceCommand } from './service-command';
import { sessionsCommand } from './sessions-command';
import { sweepCommand } from './sweep-command';
import { urlCommand } from './url-command';

/** Every `homing` command, in the order `homing --help` lists them. */
export const commands: readonly Command[] = [gatewayCommand, urlCommand, sessionsCommand, deliveriesCommand, pairingCommand, schedulesCommand, sweepCommand, serviceCommand, doctorCommand, demoCommand];
