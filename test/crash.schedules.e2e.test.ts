import { defineCrashSuite } from './crash/suite';
import { scheduleCrashes } from './crash/schedules';

defineCrashSuite(scheduleCrashes);
