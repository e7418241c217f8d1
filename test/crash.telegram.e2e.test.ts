import { defineCrashSuite } from './crash/suite';
import { telegramCrashes } from './crash/telegram';

defineCrashSuite(telegramCrashes);
