import { defineCrashSuite } from './crash/suite';
import { discordCrashes } from './crash/discord';

defineCrashSuite(discordCrashes);
