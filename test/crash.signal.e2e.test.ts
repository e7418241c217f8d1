import { defineCrashSuite } from './crash/suite';
import { signalCrashes } from './crash/signal';

defineCrashSuite(signalCrashes);
