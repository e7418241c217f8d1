import { defineCrashSuite } from './crash/suite';
import { xmppCrashes } from './crash/xmpp';

defineCrashSuite(xmppCrashes);
