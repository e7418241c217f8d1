import { defineChaosSuite } from './chaos/suite';

defineChaosSuite('slack');
