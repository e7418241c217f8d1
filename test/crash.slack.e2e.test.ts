import { defineCrashSuite } from './crash/suite';
import { slackCrashes } from './crash/slack';

defineCrashSuite(slackCrashes);
