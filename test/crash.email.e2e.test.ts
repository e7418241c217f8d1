import { defineCrashSuite } from './crash/suite';
import { emailCrashes } from './crash/email';

defineCrashSuite(emailCrashes);
