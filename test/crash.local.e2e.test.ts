import { defineCrashSuite } from './crash/suite';
import { localCrashes } from './crash/local';

defineCrashSuite(localCrashes);
