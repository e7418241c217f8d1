import { defineCrashSuite } from './crash/suite';
import { ircCrashes } from './crash/irc';

defineCrashSuite(ircCrashes);
