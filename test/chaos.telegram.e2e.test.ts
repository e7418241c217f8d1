import { defineChaosSuite } from './chaos/suite';

defineChaosSuite('telegram');
