-- AlterEnum
ALTER TYPE "budget_action" ADD VALUE 'stop';
