import { defineCrashSuite } from './crash/suite';
import { matrixCrashes } from './crash/matrix';

defineCrashSuite(matrixCrashes);
